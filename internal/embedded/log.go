package embedded

import (
	"log"
	"log/slog"
)

// slogToLog adapts the server's slog logger to the *log.Logger http.Server wants.
func slogToLog(l *slog.Logger) *log.Logger {
	return slog.NewLogLogger(l.Handler(), slog.LevelDebug)
}
