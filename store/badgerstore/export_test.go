package badgerstore

// SyncRounds returns how many group commit sync rounds s has finished (0
// without group commit), for the benchmarks of package badgerstore_test.
func SyncRounds(s *Store) uint64 {
	if s.gs == nil {
		return 0
	}
	s.gs.mu.Lock()
	defer s.gs.mu.Unlock()
	return s.gs.done
}
