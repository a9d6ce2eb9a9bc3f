package badgerstore

import (
	"bytes"
	"hash/maphash"
	"sync"
)

// recordCache keeps, per key, the last value read or written and the
// record decoded from it, so that a record read again (by the next
// transaction of its transfer, by a View polling it) is not decoded
// again. An entry is served only to a reader that holds the very same
// bytes (compared in full), so it can never be stale, whatever the
// version or the transaction: decoding equal bytes gives equal records.
// A record written by a committed Update enters the cache with its
// encoding, so its next reader does not decode it either; only records
// whose JSON decodes back to the same value enter that way (see
// roundTrips).
//
// Records are the stored forms (handoffRow, ...), kept by value: their
// reference-typed fields (handoffRow.History, workspaceRow.Running) are
// copied by the conversions both ways (toHandoff and record, ...) and
// never written through, so readers and writers share nothing mutable
// with the cache. TestStoredFormsShareNothing fails on a new
// reference-typed field until it is listed there (and copied).
type recordCache struct {
	seed   maphash.Seed
	budget int // bytes per shard
	shards [16]cacheShard
}

type cacheShard struct {
	mu   sync.Mutex
	m    map[string]cacheEntry
	size int
}

type cacheEntry struct {
	b []byte
	v any
}

// newRecordCache keeps up to about 16*perShard bytes of values (and as
// much again of decoded records).
func newRecordCache(perShard int) *recordCache {
	c := &recordCache{seed: maphash.MakeSeed(), budget: perShard}
	for i := range c.shards {
		c.shards[i].m = make(map[string]cacheEntry)
	}
	return c
}

func (c *recordCache) shard(k []byte) *cacheShard {
	return &c.shards[maphash.Bytes(c.seed, k)%uint64(len(c.shards))]
}

// get returns the record cached for k if it was decoded from b.
func (c *recordCache) get(k, b []byte) (any, bool) {
	s := c.shard(k)
	s.mu.Lock()
	e, ok := s.m[string(k)]
	s.mu.Unlock()
	if !ok || !bytes.Equal(e.b, b) {
		return nil, false
	}
	return e.v, true
}

// put caches v, decoded from b (which the cache keeps: the caller must
// not change it), as the record under k. A value over a quarter of the
// shard's budget is not cached; a full shard drops arbitrary entries.
func (c *recordCache) put(k, b []byte, v any) {
	if 4*len(b) > c.budget {
		return
	}
	s := c.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.m[string(k)]; ok {
		s.size -= len(old.b)
		delete(s.m, string(k))
	}
	if s.size+len(b) > c.budget {
		for old, e := range s.m {
			if s.size+len(b) <= c.budget {
				break
			}
			s.size -= len(e.b)
			delete(s.m, old)
		}
	}
	s.m[string(k)] = cacheEntry{b: b, v: v}
	s.size += len(b)
}

// roundTrips reports whether b, the JSON encoding of a record, decodes
// back to the record itself. encoding/json writes a string's invalid
// UTF-8 as the escape \ufffd, which decodes to another string; every
// other field of the stored forms (strings, integers, booleans, UTC
// times, hex hashes) decodes to what was encoded. A literal backslash
// before "ufffd" in a string only makes this answer no, needlessly.
func roundTrips(b []byte) bool {
	return !bytes.Contains(b, []byte(`\ufffd`))
}
