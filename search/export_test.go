package search

// SetHook sets ix's hook (see Index.hook), for tests outside the package.
func SetHook(ix *Index, f func(string)) { ix.hook = f }
