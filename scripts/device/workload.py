"""A small GPU workload for capturing a real coroner bundle on a GPU machine.

It behaves like the start of an inference server, honestly labelled: a main
process logs with Python's logging, starts two worker processes that each
allocate GPU memory and multiply matrices, builds a tiny torch C++/CUDA
extension (ninja, nvcc and its compilers run as children), and serves a
/health endpoint that answers 503 until the workers are ready and 200 after.
It runs until it is killed.
"""
import http.server
import logging
import multiprocessing as mp
import os
import sys
import tempfile
import threading
import time

logging.basicConfig(format="%(asctime)s %(levelname)s %(processName)s %(message)s", level=logging.INFO, stream=sys.stdout)
log = logging.getLogger("workload")

def worker(rank, ready_count):
    import torch

    torch.cuda.set_device(0)
    log.info("worker %d: allocating GPU memory", rank)
    blocks = [torch.empty(1 << 30, dtype=torch.uint8, device="cuda") for _ in range(8)]  # 8 GiB
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    log.info("worker %d: holding %.1f GiB, multiplying", rank, sum(b.numel() for b in blocks) / 2**30)
    with ready_count.get_lock():
        ready_count.value += 1
    n = 0
    while True:
        for _ in range(50):
            a = (a @ a).clamp_(-1, 1)
        torch.cuda.synchronize()
        n += 1
        if n % 20 == 0:
            log.info("worker %d: %d rounds", rank, n)
        time.sleep(0.05)


def build_extension():
    from torch.utils.cpp_extension import load_inline

    src = "__global__ void axpy(float a, float* x, float* y, int n){int i=blockIdx.x*blockDim.x+threadIdx.x; if(i<n) y[i]+=a*x[i];}\n" \
          "void run(float a, torch::Tensor x, torch::Tensor y){int n=x.numel(); axpy<<<(n+255)/256,256>>>(a,x.data_ptr<float>(),y.data_ptr<float>(),n);}\n"
    log.info("JIT build of a CUDA extension begins")
    t = time.time()
    load_inline(name="axpy_capture", cpp_sources="void run(float a, torch::Tensor x, torch::Tensor y);",
                cuda_sources="#include <torch/extension.h>\n" + src, functions=["run"],
                build_directory=tempfile.mkdtemp(), verbose=True)
    log.info("JIT build finished in %.1f s", time.time() - t)


class Health(http.server.BaseHTTPRequestHandler):
    ready_count = None

    def do_GET(self):
        ok = self.ready_count.value >= 2 and self.path in ("/health", "/v1/models")
        self.send_response(200 if ok else 503)
        self.end_headers()
        self.wfile.write(b"ok\n" if ok else b"starting\n")

    def log_message(self, fmt, *args):
        log.info("health: " + fmt, *args)


def main():
    port = int(os.environ.get("PORT", "8123"))
    ctx = mp.get_context("spawn")
    ready_count = ctx.Value("i", 0)
    Health.ready_count = ready_count
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), Health)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    log.info("workload pid %d, health on port %d", os.getpid(), port)
    procs = [ctx.Process(target=worker, args=(r, ready_count), name=f"worker-{r}") for r in range(2)]
    for p in procs:
        p.start()
    build = ctx.Process(target=build_extension, name="jit-build")
    build.start()
    build.join()
    log.info("JIT build process exited with code %s", build.exitcode)
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
