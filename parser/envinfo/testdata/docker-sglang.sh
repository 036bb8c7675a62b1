export NCCL_DEBUG=WARN
docker run --rm -it --gpus '"device=0,1"' --shm-size=32g --ipc host -e NCCL_DEBUG \
  lmsysorg/sglang:v0.5.5-cu129 \
  bash -c "SGLANG_ENABLE_TORCH_COMPILE=0 python3 -m sglang.launch_server --model-path Qwen/Qwen3-14B --tp-size 2 --host 0.0.0.0 --port 30000"
