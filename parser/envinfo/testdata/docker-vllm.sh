docker run -d --gpus all --ipc=host --shm-size 16g \
  -p 8000:8000 \
  -v /data/hf:/root/.cache/huggingface \
  -e HF_TOKEN=hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 \
  -e NCCL_P2P_DISABLE=1 \
  --name vllm-llama \
  vllm/vllm-openai:v0.11.0 \
  --model meta-llama/Llama-3.1-8B-Instruct \
  --tensor-parallel-size 2 \
  --max-num-seqs 256
