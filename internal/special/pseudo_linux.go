//go:build linux

package special

import (
	"os"
	"syscall"
)

// The magic numbers of the pseudo file systems (linux/magic.h).
var pseudoMagic = map[int64]bool{
	0x9fa0:     true, // proc
	0x62656572: true, // sysfs
	0x64626720: true, // debugfs
	0x74726163: true, // tracefs
	0x27e0eb:   true, // cgroup
	0x63677270: true, // cgroup2
	0x73636673: true, // securityfs
	0x6165676c: true, // pstore
	0xde5e81e4: true, // efivarfs
	0x42494e4d: true, // binfmt_misc
	0xcafe4a11: true, // bpf
	0x1cd1:     true, // devpts
	0x62646576: true, // bdev
	0x50495045: true, // pipefs
	0x534f434b: true, // sockfs
}

func pseudo(f *os.File) bool {
	// Through SyscallConn, not Fd, which would put a non-blocking file
	// back into blocking mode.
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var st syscall.Statfs_t
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.Fstatfs(int(fd), &st) }); err != nil || serr != nil {
		return false
	}
	return pseudoMagic[int64(st.Type)]
}
