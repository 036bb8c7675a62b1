#!/bin/bash
# Tuned SGLang launch for Kimi-K2.5 INT4 on 8x RTX PRO 6000 Blackwell
MODEL=/models/Kimi-K2.5-INT4
export HF_HUB_OFFLINE=1
NCCL_PROTO=LL NCCL_ALGO=Ring NCCL_P2P_LEVEL=SYS NCCL_MIN_NCHANNELS=4 \
nohup python3 -m sglang.launch_server \
  --model-path $MODEL \
  --tp 8 \
  --trust-remote-code \
  --attention-backend flashinfer \
  --num-continuous-decode-steps 4 \
  --mem-fraction-static 0.88 \
  --cuda-graph-bs 1 2 4 8 \
  --host 0.0.0.0 --port 8000 \
  > /tmp/sglang_tuned.log 2>&1 &
echo "launched pid $!"
