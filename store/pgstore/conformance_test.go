package pgstore_test

import (
	"testing"

	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/pgstore"
	"github.com/batonhq/baton/store/storetest"
)

func TestConformance(t *testing.T) {
	serverURL(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		return open(t, "", pgstore.Options{})
	})
}
