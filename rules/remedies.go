// Remedies that several rules give for the same cause.

package rules

// ncclRemedy is what to do about a broken NCCL transport: shared memory
// for shm-exhausted, the P2P path otherwise.
func ncclRemedy(cat Category) string {
	if cat == CatSHMExhausted {
		return "Give the container more shared memory (`docker run --shm-size 16g` or `--ipc=host`; in Kubernetes an emptyDir with medium: Memory on /dev/shm), then restart."
	}
	return "Test the P2P path with `nvidia-smi topo -p2p r` and NCCL's all_reduce_perf; disable PCIe ACS in the BIOS or `setpci`, or turn P2P off with NCCL_P2P_DISABLE=1 (slower but safe); for vLLM also try --disable-custom-all-reduce. NCCL_DEBUG=INFO shows the transport chosen per pair."
}
