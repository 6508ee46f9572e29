// Package cache keeps recently used values in memory.
package cache

import (
	"sync"
	"time"
)

// Entry is one cached value.
type Entry struct {
	Value   []byte
	Expires time.Time
}

// Store is safe for concurrent use.
type Store struct {
	mu      sync.RWMutex
	entries map[string]Entry
}

// Getter reads values.
type Getter interface {
	Get(key string) ([]byte, bool)
}

// New returns an empty store.
func New() *Store {
	return &Store{entries: make(map[string]Entry)}
}

// Get returns the value for key if it has not expired.
func (s *Store) Get(key string) ([]byte, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.entries[key]
	if !ok || time.Now().After(e.Expires) {
		return nil, false
	}
	return e.Value, true
}

func (s Store) Len() int { return len(s.entries) }
