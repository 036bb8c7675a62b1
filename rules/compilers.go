// The compiler processes of a snapshot and the server they work for: a
// kernel build running, read by jit-compile, attention-backend and stall.

package rules

import "github.com/coroner-dev/coroner/parser/facts"

// compileTree is the compilers of one snapshot and the server process they
// work for.
type compileTree struct {
	snap      *facts.ProcSnapshot
	compilers []*facts.Process
	owner     *facts.Process
}

// compilersOf finds the live compilers of snapshot s under a server or
// Python process (Inductor and Triton pool workers only while busy).
func compilersOf(s *facts.ProcSnapshot) compileTree {
	t := compileTree{snap: s}
	if s == nil {
		return t
	}
	for _, p := range s.Procs {
		if !p.Role.IsCompile() || p.Defunct {
			continue
		}
		// Inductor and Triton keep pools of compile workers that sleep
		// between builds; a sleeping one compiles nothing. Compilers proper
		// (nvcc, cicc, ptxas, ninja) exist only while a build runs.
		if p.Role == facts.RoleCompileWorker && p.State != 'R' && p.State != 'D' && p.CPUPct < 5 {
			continue
		}
		anc := s.Ancestors(p.PID)
		var owner *facts.Process
		for _, a := range anc {
			if a.Role.IsServer() || a.Role == facts.RolePython {
				owner = a
				break
			}
		}
		if owner == nil && len(anc) == 0 && p.PPID < 0 {
			// No tree in this format (ps aux): a compiler next to a server
			// process is attributed to it.
			if ws := Workers(s); len(ws) > 0 {
				owner = ws[0]
			}
		}
		if owner == nil {
			continue
		}
		if t.owner == nil {
			t.owner = owner
		}
		t.compilers = append(t.compilers, p)
	}
	return t
}
