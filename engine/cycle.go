package engine

// FindCycle returns a cycle of the graph whose nodes are from (walked in
// that order) and whose edges are next(n): the nodes along it, the first
// repeated at the end; nil when there is none. Each node is walked once.
func FindCycle(from []string, next func(string) []string) []string {
	state := map[string]uint8{} // 1: on the path, 2: done
	var path []string
	var visit func(n string) []string
	visit = func(n string) []string {
		switch state[n] {
		case 1:
			for i, p := range path {
				if p == n {
					return append(append([]string(nil), path[i:]...), n)
				}
			}
		case 2:
			return nil
		}
		state[n] = 1
		path = append(path, n)
		for _, m := range next(n) {
			if c := visit(m); c != nil {
				return c
			}
		}
		path = path[:len(path)-1]
		state[n] = 2
		return nil
	}
	for _, n := range from {
		if c := visit(n); c != nil {
			return c
		}
	}
	return nil
}
