package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/batonhq/baton/host"
)

// errSocketReplaced: the public entry is no longer the one the successor
// probed, so it refuses to rename over it.
var errSocketReplaced = errors.New("socket_replaced: the public socket is no longer the entry that was probed")

// fileID names a directory entry's target: device and inode.
type fileID struct{ dev, ino uint64 }

// statID returns the id of the entry at path, without following a
// symbolic link. The error wraps fs.ErrNotExist when nothing is there.
func statID(path string) (fileID, fs.FileMode, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return fileID{}, 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, 0, fmt.Errorf("stat %s: no device and inode", path)
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino}, fi.Mode(), nil
}

// replaceIfSame renames side over public only if public is still the
// entry expected: a successor never replaces a socket it did not probe.
func replaceIfSame(side, public string, expected fileID) error {
	cur, _, err := statID(public)
	if err != nil || cur != expected {
		return errSocketReplaced
	}
	return os.Rename(side, public)
}

// lockTakeover serializes the probe-and-takeover of every rpchost serving
// path, so that two successors started at once take over one after the
// other (the second becoming the first's successor) instead of racing.
func lockTakeover(ctx context.Context, path string) (release func(), err error) {
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, err
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("takeover lock %s.lock: %w", path, ctx.Err())
		}
	}
}

// probe asks whoever serves path for its protocol info. It returns nil
// info when nothing is there, or when a stale socket file (nothing
// listening) was there and has been removed; otherwise the live host's
// info and the id of the entry that answered.
func probe(ctx context.Context, path string) (*host.Info, fileID, error) {
	for range 3 {
		id, mode, err := statID(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fileID{}, nil
		}
		if err != nil {
			return nil, fileID{}, err
		}
		if mode.Type() != fs.ModeSocket {
			return nil, fileID{}, fmt.Errorf("%s exists and is not a socket", path)
		}
		info, err := askInfo(ctx, path)
		if err != nil {
			var op *net.OpError
			if errors.As(err, &op) || errors.Is(err, host.ErrClosed) {
				// Nothing listens: a stale socket file. Remove it only if
				// it is still the same entry.
				if cur, _, err := statID(path); err == nil && cur == id {
					_ = os.Remove(path)
				}
				continue
			}
			return nil, fileID{}, err
		}
		if cur, _, err := statID(path); err == nil && cur == id {
			return &info, id, nil
		}
	}
	return nil, fileID{}, fmt.Errorf("%s keeps changing while probed", path)
}

// askInfo asks path for get_protocol_info. The bound is generous: a live
// host under load answers slowly, and a slow answer must not be taken for
// a dead one.
func askInfo(ctx context.Context, path string) (host.Info, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := host.Dial(ctx, path, nil)
	if err != nil {
		return host.Info{}, err
	}
	defer c.Close()
	return c.Info(ctx)
}

// waitReady waits until path answers get_protocol_info with instanceID:
// the rename is visible to every new client.
func waitReady(ctx context.Context, path, instanceID string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		info, err := askInfo(ctx, path)
		if err == nil && info.InstanceID == instanceID {
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("%s never answered as %s: %w", path, instanceID, ctx.Err())
		}
	}
}

// sidePath names the side socket a successor binds before the rename: in
// the same directory (rename(2) does not cross file systems), hidden, and
// unique to this process.
func sidePath(public string) string {
	return filepath.Join(filepath.Dir(public), fmt.Sprintf(".%s.%d.next", filepath.Base(public), os.Getpid()))
}

// listenUnix binds path. The listener never unlinks its file on close: by
// then the path may be the successor's.
func listenUnix(path string) (*net.UnixListener, error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	ul := ln.(*net.UnixListener)
	ul.SetUnlinkOnClose(false)
	return ul, nil
}
