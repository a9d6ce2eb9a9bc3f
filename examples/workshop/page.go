package main

import (
	"embed"
	"io/fs"
	"net/http"
)

// web holds the page: plain HTML, CSS and JavaScript, no build step and
// nothing fetched from elsewhere.
//
//go:embed web
var web embed.FS

// page serves the embedded files under a strict content security policy:
// only this server's own scripts, styles and connections.
func (s *server) page() http.Handler {
	sub, err := fs.Sub(web, "web")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
