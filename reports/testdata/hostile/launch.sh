#!/bin/bash
export NCCL_DEBUG='<script>alert(1)</script>'
export CUDA_VISIBLE_DEVICES=0,1
python3 -m sglang.launch_server --model-path '/models/<img src=x onerror=alert(2)>' --tp 2 --attention-backend triton
