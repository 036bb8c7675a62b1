package collect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coroner-dev/coroner/internal/escape"
	"github.com/coroner-dev/coroner/parser/manifest"
)

// Collection across a cluster goes through the tools the cluster already
// has, as the invoking user, with fixed arguments: kubectl (get, logs,
// describe, exec), Slurm's scontrol and srun (on the job's own nodes, a step
// that overlaps the job's), the ray CLI (list, status, logs). Names that
// come from the cluster (pods, containers, nodes, Ray node ids and log file
// names) are checked against the shapes the cluster allows before they are
// passed on, each as one argument, never through a shell; the commands run
// on a node are fixed programs of that node (ps, nvidia-smi, date, cat),
// with the node's rights. Every node gets a folder of its own, nodes/NAME,
// laid out like a local collect (round-NN/, once/, logs/); the manifest
// names each node with its host, its state and what went wrong there.

// Cluster says which cluster to collect from.
type Cluster struct {
	// Kind is "kubernetes", "slurm" or "ray".
	Kind string
	// Kubernetes: the pods by name, or by label selector, in a namespace
	// (the context's when ""), and the container (the pod's default one
	// when "").
	Kubectl, Context, Namespace, Selector, Container string
	Pods                                             []string
	// Slurm: the job whose nodes are collected.
	Job            string
	Srun, Scontrol string
	// Ray: the cluster's address ("" for the ray CLI's own default).
	Ray, RayAddress string
	// Parallel bounds the nodes collected at once (16 if 0).
	Parallel int
}

// Names from a cluster, as the cluster allows them: a Kubernetes name is a
// DNS-1123 subdomain (pods, nodes) or label (namespaces, containers); a
// Slurm node and a Ray node name are host names; a Ray node id is hex; a
// Ray log file is a relative path of plain names. None starts with "-", so
// none can be read as a flag.
var (
	k8sSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	k8sLabel     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	hostName     = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$`)
	rayNodeID    = regexp.MustCompile(`^[0-9a-f]{8,128}$`)
	rayLogFile   = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$`)
	slurmJobID   = regexp.MustCompile(`^[0-9]+(_[0-9]+)?(\+[0-9]+)?$`)
)

func validName(re *regexp.Regexp, s string, max int) bool {
	return len(s) <= max && re.MatchString(s) && !strings.Contains(s, "..")
}

// ValidateCluster checks a cluster configuration given on the command line.
func ValidateCluster(cl *Cluster) error {
	switch cl.Kind {
	case "kubernetes":
		if len(cl.Pods) == 0 && cl.Selector == "" {
			return fmt.Errorf("--k8s needs the pods: --pod NAME (repeat) or --selector LABELS")
		}
		for _, p := range cl.Pods {
			if !validName(k8sSubdomain, p, 253) {
				return fmt.Errorf("--pod %q is not a Kubernetes pod name", p)
			}
		}
		if cl.Namespace != "" && !validName(k8sLabel, cl.Namespace, 63) {
			return fmt.Errorf("--namespace %q is not a Kubernetes namespace", cl.Namespace)
		}
		if cl.Container != "" && !validName(k8sLabel, cl.Container, 63) {
			return fmt.Errorf("--container %q is not a Kubernetes container name", cl.Container)
		}
	case "slurm":
		if !slurmJobID.MatchString(cl.Job) {
			return fmt.Errorf("--slurm %q is not a Slurm job id", cl.Job)
		}
	case "ray":
	default:
		return fmt.Errorf("unknown cluster kind %q", cl.Kind)
	}
	return nil
}

// node is one node of a cluster collect.
type node struct {
	m manifest.Node
	// exec builds the command that runs argv on the node; nil when the
	// cluster's tool cannot run commands there (Ray).
	exec func(argv ...string) Cmd
	// down is why the node does not answer; the rest of its captures are
	// then skipped.
	down string
	// skip holds, per program, why its later calls are skipped (a hung
	// nvidia-smi hangs again).
	skip     map[string]string
	failures int
	// logs fetches the node's logs through the cluster's tool.
	logs func(ctx context.Context, c *collector, n *node)
}

func (n *node) dir() string { return n.m.Dir }

// clusterTool is the program a kind of cluster is asked through.
func (cl *Cluster) tool() string {
	switch cl.Kind {
	case "kubernetes":
		return cl.Kubectl
	case "slurm":
		return cl.Srun
	}
	return cl.Ray
}

func (cl *Cluster) defaults() {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&cl.Kubectl, "kubectl")
	def(&cl.Srun, "srun")
	def(&cl.Scontrol, "scontrol")
	def(&cl.Ray, "ray")
	if cl.Parallel <= 0 {
		cl.Parallel = 16
	}
}

// runCluster collects from every node of a cluster into one capture.
func (c *collector) runCluster(ctx context.Context) {
	cl := c.cfg.Cluster
	cl.defaults()
	c.cap.Cluster = &manifest.Cluster{Kind: cl.Kind, Tool: cl.tool(), Context: cl.Context, Namespace: cl.Namespace,
		Selector: cl.Selector, Job: cl.Job, Address: cl.RayAddress}
	var nodes []*node
	switch cl.Kind {
	case "kubernetes":
		nodes = c.k8sNodes(ctx)
	case "slurm":
		nodes = c.slurmNodes(ctx)
	case "ray":
		nodes = c.rayNodes(ctx)
	}
	if len(nodes) == 0 && c.cap.Missing == "" {
		c.cap.Missing = "the cluster listed no node to collect from"
	}
	sem := make(chan struct{}, cl.Parallel)
	each := func(f func(n *node)) {
		var wg sync.WaitGroup
		for _, n := range nodes {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				f(n)
			})
		}
		wg.Wait()
	}
	// A node that cannot print its clock does not answer: one command's
	// timeout, not one per capture.
	each(func(n *node) { c.nodeClock(ctx, n) })
	start := c.now()
	for i := 1; i <= c.cfg.Count; i++ {
		if i > 1 {
			if wait := start.Add(time.Duration(i-1) * c.cfg.Every).Sub(c.now()); wait > 0 {
				c.cfg.Progress(fmt.Sprintf("round %d of %d in %s", i, c.cfg.Count, wait.Round(time.Second)))
				select {
				case <-ctx.Done():
				case <-time.After(wait):
				}
			}
		}
		if ctx.Err() != nil {
			c.note("interrupted before round %d of %d", i, c.cfg.Count)
			break
		}
		c.cfg.Progress(fmt.Sprintf("round %d of %d on %d nodes", i, c.cfg.Count, len(nodes)))
		each(func(n *node) { c.nodeRound(ctx, n, i) })
	}
	c.cfg.Progress(fmt.Sprintf("one-time captures and logs of %d nodes", len(nodes)))
	each(func(n *node) {
		c.nodeOnce(ctx, n)
		if n.logs != nil && ctx.Err() == nil {
			n.logs(ctx, c, n)
		}
	})
	answered := 0
	for _, n := range nodes {
		switch {
		case n.down != "":
			// A node's words (srun's, kubectl's stderr) reach the terminal
			// and the manifest as plain text.
			n.m.Status, n.m.Error = "failed", escape.Text(n.down)
		case n.failures > 0:
			n.m.Status, answered = "partial", answered+1
		default:
			n.m.Status, answered = "collected", answered+1
		}
		c.cap.Nodes = append(c.cap.Nodes, n.m)
	}
	if len(nodes) > 0 && answered == 0 && c.cap.Missing == "" {
		c.cap.Missing = fmt.Sprintf("none of the %d nodes answered", len(nodes))
	}
}

// remote runs argv on a node and records it; it returns the result with
// Program set to the program run there.
func (c *collector) remote(ctx context.Context, n *node, name string, round int, argv []string, opt func(*Cmd)) Result {
	prog := argv[0]
	c.mu.Lock()
	why := n.skip[prog]
	if n.down != "" {
		why = "the node did not answer: " + n.down
	}
	c.mu.Unlock()
	cmd := n.exec(argv...)
	if opt != nil {
		opt(&cmd)
	}
	if why != "" {
		res := Result{Program: prog, Command: display(cmd.Path, cmd.Args), ExitCode: -1, Skipped: why}
		c.record(name, round, res, nil, false, nil)
		return res
	}
	res := c.run(ctx, cmd)
	if res.NotFound {
		// The cluster's own tool is missing: no node can answer through it.
		c.mu.Lock()
		n.down = res.Program + " was not found"
		c.mu.Unlock()
	} else {
		res.Program = prog
		if missingProgram(res, prog) {
			res.NotFound = true
		}
	}
	if !res.OK() {
		c.mu.Lock()
		n.failures++
		if res.TimedOut {
			if n.skip == nil {
				n.skip = map[string]string{}
			}
			n.skip[prog] = fmt.Sprintf("an earlier %s call on this node timed out after %s", prog, res.Timeout)
		}
		c.mu.Unlock()
	}
	var data []byte
	if res.OK() || len(res.Stdout) > 0 && !res.NotFound {
		data = res.Stdout
	}
	c.record(name, round, res, data, false, func(a *manifest.Artifact) {
		if res.Cut != nil {
			a.Truncated = res.Cut
		}
	})
	return res
}

// missingProgram reports a command whose program the node lacks: the
// container runtime's, srun's or a shell's words for it.
func missingProgram(r Result, prog string) bool {
	if r.OK() || r.TimedOut {
		return false
	}
	e := string(r.Stderr)
	return strings.Contains(e, "executable file not found") ||
		strings.Contains(e, "execve(): "+prog+": No such file or directory") ||
		strings.Contains(e, "exec: \""+prog+"\"") && strings.Contains(e, "not found") ||
		r.ExitCode == 127 && strings.Contains(e, prog)
}

// nodeDown reads a failed first command as the node not answering, and
// says why in a line; "" when the node answered (a missing date is no
// failure of the node).
func nodeDown(r Result) string {
	switch {
	case r.OK() || r.NotFound:
		return ""
	case r.TimedOut:
		return fmt.Sprintf("did not answer within %s (%s was killed)", r.Timeout, r.Command)
	case r.Skipped != "":
		return r.Skipped
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(r.Stderr)), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	msg := strings.Join(lines, " / ")
	if len(msg) > 400 {
		msg = msg[:400] + "..."
	}
	if msg == "" && r.Err != nil {
		msg = r.Err.Error()
	}
	return "did not answer: " + msg
}

// nodeClock asks the node for its clock, which dates its snapshots and
// gives its offset from the collector's.
func (c *collector) nodeClock(ctx context.Context, n *node) {
	if n.exec == nil {
		return
	}
	before := c.now()
	res := c.remote(ctx, n, n.dir()+"/once/date.txt", 0, []string{"date", "+%Y-%m-%dT%H:%M:%S.%N%z %Z"}, nil)
	after := c.now()
	if why := nodeDown(res); why != "" {
		c.mu.Lock()
		n.down = why
		c.mu.Unlock()
		return
	}
	f := strings.Fields(string(res.Stdout))
	if len(f) == 0 {
		return
	}
	t, err := time.Parse("2006-01-02T15:04:05.999999999-0700", f[0])
	if err != nil {
		// BusyBox's date may not know %N.
		s := f[0]
		if i := strings.Index(s, "."); i > 0 && len(s) >= i+6 {
			s = s[:i] + s[len(s)-5:]
		}
		if t, err = time.Parse("2006-01-02T15:04:05-0700", s); err != nil {
			return
		}
	}
	mid := before.Add(after.Sub(before) / 2)
	off := t.Sub(mid).Round(time.Millisecond).Seconds()
	c.mu.Lock()
	n.m.ClockOffsetS = &off
	c.mu.Unlock()
}

// nodeRound takes one round of a node's snapshots, as a local collect does.
func (c *collector) nodeRound(ctx context.Context, n *node, i int) {
	if n.exec == nil {
		return
	}
	dir := fmt.Sprintf("%s/round-%02d", n.dir(), i)
	r := manifest.Round{Dir: dir, N: i, Start: c.now()}
	env := func(cmd *Cmd) { cmd.Env = cEnv() }
	c.remote(ctx, n, dir+"/ps_eo.txt", i, []string{"ps", "-eo", PSColumns, "-ww"}, env)
	c.remote(ctx, n, dir+"/ps_auxf.txt", i, []string{"ps", "auxfww"}, env)
	c.remote(ctx, n, dir+"/nvidia-smi-q.xml", i, []string{"nvidia-smi", "-q", "-x"}, nil)
	c.remote(ctx, n, dir+"/query-gpu.csv", i, []string{"nvidia-smi", "--query-gpu=" + QueryGPU, "--format=csv"}, nil)
	c.remote(ctx, n, dir+"/compute-apps.csv", i, []string{"nvidia-smi", "--query-compute-apps=" + QueryApps, "--format=csv"}, nil)
	r.End = c.now()
	c.mu.Lock()
	c.cap.Rounds = append(c.cap.Rounds, r)
	c.mu.Unlock()
}

// nodeOnce takes a node's one-time captures and its --log files.
func (c *collector) nodeOnce(ctx context.Context, n *node) {
	if n.exec == nil {
		return
	}
	dir := n.dir() + "/once"
	c.remote(ctx, n, dir+"/topo.txt", 0, []string{"nvidia-smi", "topo", "-m"}, nil)
	c.remote(ctx, n, dir+"/nvidia-smi-L.txt", 0, []string{"nvidia-smi", "-L"}, nil)
	c.remote(ctx, n, dir+"/meminfo.txt", 0, []string{"cat", "/proc/meminfo"}, nil)
	c.remote(ctx, n, dir+"/df.txt", 0, []string{"df", "-kT", "/", "/dev/shm", "/tmp"}, func(cmd *Cmd) { cmd.Env = cEnv() })
	names := logNames(c.cfg.Logs)
	for i, p := range c.cfg.Logs {
		name := n.dir() + "/logs/" + names[i]
		argv, why := c.remoteCat(p)
		if why != "" {
			c.record(name, 0, Result{Program: "cat", Command: "cat " + p, ExitCode: -1, Skipped: why}, nil, true, nil)
			continue
		}
		c.remote(ctx, n, name, 0, argv, c.logCmd)
	}
}

// remoteCat is the command that reads a --log on a node, or why none may.
// Through srun as root, cat would run as root on the node, where no walk
// of the path's owners (readLog) can be made: a link the job's user put at
// the path would make root copy whatever it names. So it runs as the
// job's user (setpriv, with the user's groups): the log is read with the
// rights of whoever could have changed it. Without the job's user known,
// it is not read. kubectl exec runs commands as the container's user,
// whatever user runs kubectl: the server's, already.
func (c *collector) remoteCat(p string) ([]string, string) {
	if c.cfg.Cluster.Kind != "slurm" || !selfIdentity().root() || c.jobUID == 0 {
		return []string{"cat", p}, ""
	}
	if c.jobUID < 0 || c.jobGID < 0 {
		return nil, fmt.Sprintf("not read: coroner runs as root and the Slurm job's user is not known, so cat on the node would read %s as root", p)
	}
	return []string{"setpriv", "--reuid=" + strconv.Itoa(c.jobUID), "--regid=" + strconv.Itoa(c.jobGID), "--init-groups", "--", "cat", p}, ""
}

// logCmd sets a command whose output is a log: its head and tail are kept,
// and it may take longer than a snapshot.
func (c *collector) logCmd(cmd *Cmd) {
	cmd.MaxOutput, cmd.KeepTail = c.cfg.LogHead, c.cfg.LogTail
	cmd.Timeout = max(c.cfg.Timeout, 2*time.Minute)
}

// folder makes a node's folder name unique: a Ray node id's start, else a
// number.
func folder(used map[string]bool, name, id string) string {
	if used[name] && id != "" {
		name += "-" + id[:min(8, len(id))]
	}
	base := name
	for k := 2; used[name]; k++ {
		name = fmt.Sprintf("%s~%d", base, k)
	}
	used[name] = true
	return name
}

// clusterRecord records a cluster-level command under cluster/.
func (c *collector) clusterRecord(ctx context.Context, name string, cmd Cmd) Result {
	res := c.run(ctx, cmd)
	var data []byte
	if res.OK() {
		data = res.Stdout
	}
	c.record("cluster/"+name, 0, res, data, false, nil)
	return res
}

// toolMissing says that a cluster's tool could not run at all.
func (c *collector) toolMissing(res Result, what string) bool {
	if res.OK() {
		return false
	}
	switch {
	case res.NotFound:
		c.cap.Missing = fmt.Sprintf("%s was not found: nothing could be collected from the %s", res.Program, what)
	default:
		c.cap.Missing = fmt.Sprintf("%s failed, nothing could be collected from the %s: %s", res.Command, what, firstLines(res))
	}
	return true
}

func firstLines(r Result) string {
	s := strings.TrimSpace(string(r.Stderr))
	if s == "" && r.Err != nil {
		s = r.Err.Error()
	}
	if len(s) > 400 {
		s = s[:400] + "..."
	}
	return strings.ReplaceAll(s, "\n", " / ")
}

// Kubernetes.

type k8sPod struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		NodeName   string `json:"nodeName"`
		Containers []struct {
			Name string `json:"name"`
		} `json:"containers"`
	} `json:"spec"`
	Status struct {
		Phase             string `json:"phase"`
		ContainerStatuses []struct {
			Name         string `json:"name"`
			RestartCount int    `json:"restartCount"`
		} `json:"containerStatuses"`
	} `json:"status"`
}

func (c *collector) kubectl(args ...string) Cmd {
	cl := c.cfg.Cluster
	var pre []string
	if cl.Context != "" {
		pre = append(pre, "--context="+cl.Context)
	}
	return Cmd{Path: cl.Kubectl, Args: append(pre, args...)}
}

func (c *collector) k8sNodes(ctx context.Context) []*node {
	cl := c.cfg.Cluster
	args := []string{"get", "pods", "--output=json"}
	if cl.Namespace != "" {
		args = append(args, "--namespace="+cl.Namespace)
	}
	if cl.Selector != "" {
		args = append(args, "--selector="+cl.Selector)
	}
	args = append(args, cl.Pods...)
	res := c.clusterRecord(ctx, "pods.json", c.kubectl(args...))
	if c.toolMissing(res, "Kubernetes cluster") {
		return nil
	}
	var list struct {
		Kind  string   `json:"kind"`
		Items []k8sPod `json:"items"`
	}
	if err := json.Unmarshal(res.Stdout, &list); err != nil {
		c.cap.Missing = fmt.Sprintf("kubectl get pods printed no pod list: %v", err)
		return nil
	}
	if list.Kind == "Pod" {
		var p k8sPod
		_ = json.Unmarshal(res.Stdout, &p)
		list.Items = []k8sPod{p}
	}
	if len(list.Items) == 0 {
		c.cap.Missing = "no pod matched " + orDefault(cl.Selector, strings.Join(cl.Pods, ", "))
		return nil
	}
	used := map[string]bool{}
	var nodes []*node
	for _, p := range list.Items {
		name, ns := p.Metadata.Name, p.Metadata.Namespace
		n := &node{m: manifest.Node{Pod: name, Namespace: ns, State: p.Status.Phase}}
		if validName(hostName, p.Spec.NodeName, 253) {
			n.m.Host = p.Spec.NodeName
		}
		if !validName(k8sSubdomain, name, 253) || ns != "" && !validName(k8sLabel, ns, 63) {
			n.m.Name = folder(used, "pod", "")
			n.m.Dir = "nodes/" + n.m.Name
			n.down = fmt.Sprintf("the cluster named a pod %q in namespace %q, which is no Kubernetes name: not asked", name, ns)
			nodes = append(nodes, n)
			continue
		}
		n.m.Name = folder(used, name, "")
		n.m.Dir = "nodes/" + n.m.Name
		ctr := cl.Container
		if ctr == "" {
			ctr = p.Metadata.Annotations["kubectl.kubernetes.io/default-container"]
		}
		if ctr == "" && len(p.Spec.Containers) > 0 {
			ctr = p.Spec.Containers[0].Name
		}
		if !validName(k8sLabel, ctr, 63) {
			n.down = fmt.Sprintf("the pod's container %q is no Kubernetes name: not asked", ctr)
			nodes = append(nodes, n)
			continue
		}
		n.m.Container = ctr
		for _, s := range p.Status.ContainerStatuses {
			if s.Name == ctr {
				n.m.Restarts = s.RestartCount
			}
		}
		scope := []string{"--container=" + ctr}
		if ns != "" {
			scope = append([]string{"--namespace=" + ns}, scope...)
		}
		n.exec = func(argv ...string) Cmd {
			return c.kubectl(append(append(append([]string{"exec"}, scope...), name, "--"), argv...)...)
		}
		n.logs = func(ctx context.Context, c *collector, n *node) {
			nsArg := []string{}
			if ns != "" {
				nsArg = []string{"--namespace=" + ns}
			}
			c.toolLog(ctx, n, n.dir()+"/logs/"+ctr+".log", c.kubectl(append(append([]string{"logs"}, scope...), name)...))
			if n.m.Restarts > 0 {
				// The log of the container before its last restart: where
				// a crash loop's cause is.
				c.toolLog(ctx, n, n.dir()+"/logs/"+ctr+".previous.log", c.kubectl(append(append([]string{"logs", "--previous"}, scope...), name)...))
			}
			res := c.run(ctx, c.kubectl(append(append([]string{"describe", "pod"}, nsArg...), name)...))
			var data []byte
			if res.OK() {
				data = res.Stdout
			}
			c.record(n.dir()+"/once/describe.txt", 0, res, data, false, nil)
		}
		nodes = append(nodes, n)
	}
	return nodes
}

// toolLog records a log that the cluster's tool prints, with its head and
// tail kept.
func (c *collector) toolLog(ctx context.Context, n *node, name string, cmd Cmd) {
	c.logCmd(&cmd)
	c.mu.Lock()
	if n.down != "" {
		// A node that did not answer gets one try of the usual length.
		cmd.Timeout = c.cfg.Timeout
	}
	c.mu.Unlock()
	res := c.run(ctx, cmd)
	if !res.OK() {
		c.mu.Lock()
		n.failures++
		c.mu.Unlock()
	}
	var data []byte
	if res.OK() {
		data = res.Stdout
	}
	c.record(name, 0, res, data, true, func(a *manifest.Artifact) { a.Truncated = res.Cut })
}

func orDefault(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Slurm.

// scontrolFields reads `scontrol show job`: Key=Value pairs, several to a
// line; a value runs to the next key of the line.
var scontrolKey = regexp.MustCompile(`(?:^|\s)([A-Za-z][A-Za-z/:_]*)=`)

func scontrolFields(out []byte) map[string]string {
	f := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		locs := scontrolKey.FindAllStringSubmatchIndex(line, -1)
		for i, l := range locs {
			end := len(line)
			if i+1 < len(locs) {
				end = locs[i+1][0]
			}
			key := line[l[2]:l[3]]
			if _, ok := f[key]; !ok {
				f[key] = strings.TrimSpace(line[l[1]:end])
			}
		}
	}
	return f
}

func (c *collector) slurmNodes(ctx context.Context) []*node {
	cl := c.cfg.Cluster
	res := c.clusterRecord(ctx, "scontrol-show-job.txt", Cmd{Path: cl.Scontrol, Args: []string{"show", "job", cl.Job}, Env: cEnv()})
	if c.toolMissing(res, "Slurm job "+cl.Job) {
		return nil
	}
	job := scontrolFields(res.Stdout)
	c.jobUID, c.jobGID = slurmID(job["UserId"]), slurmID(job["GroupId"])
	list := job["NodeList"]
	if list == "" || list == "(null)" {
		c.cap.Missing = fmt.Sprintf("Slurm job %s is %s (%s): it runs on no node", cl.Job, orDefault(job["JobState"], "in no state"),
			orDefault(job["Reason"], "no reason given"))
		return nil
	}
	c.slurmOutput(job)
	res = c.clusterRecord(ctx, "scontrol-show-hostnames.txt", Cmd{Path: cl.Scontrol, Args: []string{"show", "hostnames", list}, Env: cEnv()})
	if c.toolMissing(res, "Slurm job "+cl.Job+"'s nodes ("+list+")") {
		return nil
	}
	used := map[string]bool{}
	var nodes []*node
	for _, h := range strings.Fields(string(res.Stdout)) {
		n := &node{m: manifest.Node{State: job["JobState"]}}
		if !validName(hostName, h, 253) {
			n.m.Name = folder(used, "node", "")
			n.m.Dir = "nodes/" + n.m.Name
			n.down = fmt.Sprintf("scontrol named a node %q, which is no host name: not asked", h)
			nodes = append(nodes, n)
			continue
		}
		n.m.Name, n.m.Host = folder(used, h, ""), h
		n.m.Dir = "nodes/" + n.m.Name
		// A step on the job's own node that overlaps its steps: it gets
		// the job's GPUs and waits for no free CPU.
		n.exec = func(argv ...string) Cmd {
			return Cmd{Path: cl.Srun, Args: append([]string{"--jobid=" + cl.Job, "--overlap", "--nodelist=" + h, "--nodes=1", "--ntasks=1", "--quiet"}, argv...)}
		}
		nodes = append(nodes, n)
	}
	return nodes
}

// slurmOutput reads the job's output files where the collector sees them
// (a shared file system): only regular files, and, when the collector is
// root, only files the job's own user owns.
func (c *collector) slurmOutput(job map[string]string) {
	uid := c.jobUID
	seen := map[string]bool{}
	for _, key := range []string{"StdOut", "StdErr"} {
		p := job[key]
		if p == "" || seen[p] || !strings.HasPrefix(p, "/") || strings.Contains(p, "%") {
			continue
		}
		seen[p] = true
		name := "logs/" + path.Base(p)
		start := c.now()
		res := Result{Program: "coroner", Command: "read " + p + " (the job's " + key + ")", Start: start, ExitCode: 0}
		want := -1
		if selfIdentity().root() {
			if uid < 0 {
				res.Skipped, res.ExitCode = fmt.Sprintf("not read: %s: the job's user is not known, and coroner runs as root", p), -1
				c.record(name, 0, res, nil, true, nil)
				continue
			}
			// As root, only a file of the job's user's own.
			want = uid
		}
		data, cut, st, err := readHeadTail(p, c.cfg.LogHead, c.cfg.LogTail, want)
		res.End = c.now()
		readFailed(&res, err)
		c.record(name, 0, res, data, true, func(a *manifest.Artifact) {
			a.Source, a.Truncated = p, cut
			if st != nil {
				a.SourceBytes, a.ModTime = st.Size(), st.ModTime().UTC()
			}
		})
	}
}

// slurmID reads the id of scontrol's "alice(1000)", -1 if there is none.
func slurmID(v string) int {
	if m := slurmIDRe.FindStringSubmatch(v); m != nil {
		if id, err := strconv.Atoi(m[1]); err == nil {
			return id
		}
	}
	return -1
}

var slurmIDRe = regexp.MustCompile(`\((\d+)\)`)

// Ray.

type rayNode struct {
	NodeID       string `json:"node_id"`
	NodeIP       string `json:"node_ip"`
	IsHead       bool   `json:"is_head_node"`
	State        string `json:"state"`
	StateMessage string `json:"state_message"`
	NodeName     string `json:"node_name"`
}

func (c *collector) ray(args ...string) Cmd {
	cl := c.cfg.Cluster
	if cl.RayAddress != "" {
		args = append(args, "--address="+cl.RayAddress)
	}
	return Cmd{Path: cl.Ray, Args: args}
}

// maxRayWorkerLogs bounds the worker logs taken per node: a node runs a
// worker per GPU and a few more.
const maxRayWorkerLogs = 32

func (c *collector) rayNodes(ctx context.Context) []*node {
	res := c.clusterRecord(ctx, "ray-nodes.json", c.ray("list", "nodes", "--format=json", "--limit=10000"))
	if c.toolMissing(res, "Ray cluster") {
		return nil
	}
	var list []rayNode
	if err := json.Unmarshal(bytes.TrimSpace(res.Stdout), &list); err != nil {
		c.cap.Missing = fmt.Sprintf("ray list nodes printed no node list: %v", err)
		return nil
	}
	c.clusterRecord(ctx, "ray-status.txt", c.ray("status"))
	c.clusterRecord(ctx, "ray-actors.json", c.ray("list", "actors", "--format=json", "--detail", "--limit=10000"))
	c.note("ray runs no command on a node: the nodes of a Ray cluster have their logs, not ps or nvidia-smi (collect those with --k8s or --slurm where the cluster runs, or coroner collect on each node)")
	sort.SliceStable(list, func(i, j int) bool { return list[i].IsHead && !list[j].IsHead })
	used := map[string]bool{}
	var nodes []*node
	for _, rn := range list {
		n := &node{m: manifest.Node{State: rn.State, RayNodeID: rn.NodeID}}
		if ip, err := netip.ParseAddr(rn.NodeIP); err == nil {
			n.m.Host = ip.String()
		}
		name := rn.NodeName
		if !validName(hostName, name, 253) {
			name = strings.ReplaceAll(n.m.Host, ":", "_")
		}
		if name == "" {
			name = "node"
		}
		n.m.Name = folder(used, name, rn.NodeID)
		n.m.Dir = "nodes/" + n.m.Name
		switch {
		case !rayNodeID.MatchString(rn.NodeID):
			n.down = fmt.Sprintf("ray named a node id %q, which is not hex: not asked", rn.NodeID)
		case rn.State != "ALIVE":
			n.down = fmt.Sprintf("the node is %s in ray list nodes", orDefault(rn.State, "in no state"))
			if rn.StateMessage != "" {
				n.down += " (" + rn.StateMessage + ")"
			}
			n.down += ": its logs went with it"
		default:
			id := rn.NodeID
			n.logs = func(ctx context.Context, c *collector, n *node) { c.rayLogs(ctx, n, id) }
		}
		nodes = append(nodes, n)
	}
	return nodes
}

// rayLogs lists a node's log files and fetches those that say why a
// server's workers died: the raylet's (its OOM killer), the GCS server's
// and the workers' own output.
func (c *collector) rayLogs(ctx context.Context, n *node, id string) {
	cmd := c.ray("logs", "cluster", "--node-id="+id)
	res := c.run(ctx, cmd)
	if !res.OK() {
		c.mu.Lock()
		n.down = nodeDown(res)
		c.mu.Unlock()
	}
	c.record(n.dir()+"/once/ray-logs.txt", 0, res, res.Stdout, false, nil)
	if !res.OK() {
		return
	}
	var files []string
	workers := 0
	for _, l := range strings.Split(string(res.Stdout), "\n") {
		f, ok := strings.CutPrefix(strings.TrimSpace(l), "- ")
		if !ok {
			continue
		}
		f = strings.TrimSpace(f)
		base := path.Base(f)
		if !validName(rayLogFile, f, 255) || f != base {
			continue
		}
		switch {
		case base == "raylet.out" || base == "raylet.err" || base == "gcs_server.out" || base == "gcs_server.err":
		case strings.HasPrefix(base, "worker-") && (strings.HasSuffix(base, ".out") || strings.HasSuffix(base, ".err")):
			if workers++; workers > maxRayWorkerLogs {
				continue
			}
		default:
			continue
		}
		files = append(files, f)
	}
	if workers > maxRayWorkerLogs {
		c.note("%s: %d of the %d worker logs were taken", n.m.Name, maxRayWorkerLogs, workers)
	}
	for _, f := range files {
		c.toolLog(ctx, n, n.dir()+"/logs/"+f, c.ray("logs", "cluster", f, "--node-id="+id, "--tail=-1"))
	}
}
