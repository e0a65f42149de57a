package forge

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Window is a daily span of time in a time zone during which requests
// may change a forge: "09:00-17:00 Europe/Berlin". A span whose end is
// before its start runs over midnight ("22:00-06:00").
type Window struct {
	start, end int // minutes after midnight
	loc        *time.Location
}

// ParseWindow parses "HH:MM-HH:MM", optionally followed by a blank and an
// IANA time zone ("09:00-17:00 Europe/Berlin"); without one the zone is
// loc (nil: UTC). Start and end must differ.
func ParseWindow(s string, loc *time.Location) (*Window, error) {
	if loc == nil {
		loc = time.UTC
	}
	span, zone, _ := strings.Cut(strings.TrimSpace(s), " ")
	if zone = strings.TrimSpace(zone); zone != "" {
		l, err := time.LoadLocation(zone)
		if err != nil || zone == "Local" {
			return nil, fmt.Errorf("--window %q: %q is not a time zone; write one as Europe/Berlin or UTC", s, zone)
		}
		loc = l
	}
	var end int
	a, b, ok := strings.Cut(span, "-")
	if !ok {
		return nil, fmt.Errorf("--window %q: write the hours as 09:00-17:00, optionally followed by a time zone (09:00-17:00 Europe/Berlin)", s)
	}
	start, err := clock(a)
	if err == nil {
		var e int
		e, err = clock(b)
		end = e
	}
	if err != nil {
		return nil, fmt.Errorf("--window %q: %v; write the hours as 09:00-17:00, optionally followed by a time zone", s, err)
	}
	if start == end {
		return nil, fmt.Errorf("--window %q: the start and the end are the same; leave --window out to send requests at any time", s)
	}
	return &Window{start: start, end: end, loc: loc}, nil
}

// clock parses "HH:MM" (00:00 to 24:00) into minutes after midnight.
func clock(s string) (int, error) {
	h, m, ok := strings.Cut(s, ":")
	if !ok || len(h) < 1 || len(h) > 2 || len(m) != 2 {
		return 0, fmt.Errorf("%q is not a time of day (HH:MM)", s)
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || h[0] == '+' || h[0] == '-' || m[0] == '+' || m[0] == '-' ||
		hh < 0 || hh > 24 || mm < 0 || mm > 59 || (hh == 24 && mm != 0) {
		return 0, fmt.Errorf("%q is not a time of day (HH:MM, 00:00 to 24:00)", s)
	}
	return hh*60 + mm, nil
}

// String returns the window as ParseWindow reads it.
func (w *Window) String() string {
	return fmt.Sprintf("%02d:%02d-%02d:%02d %s", w.start/60, w.start%60, w.end/60, w.end%60, w.loc)
}

// Contains reports whether t is inside the window.
func (w *Window) Contains(t time.Time) bool {
	lt := t.In(w.loc)
	m := lt.Hour()*60 + lt.Minute()
	if w.start < w.end {
		return m >= w.start && m < w.end
	}
	return m >= w.start || m < w.end
}

// Next returns t when it is inside the window, else the next time the
// window opens.
func (w *Window) Next(t time.Time) time.Time {
	if w.Contains(t) {
		return t
	}
	lt := t.In(w.loc)
	day := time.Date(lt.Year(), lt.Month(), lt.Day(), 0, 0, 0, 0, w.loc)
	for i := 0; i < 3; i++ {
		open := day.AddDate(0, 0, i).Add(time.Duration(w.start) * time.Minute)
		if !open.Before(t) {
			return open
		}
	}
	// Not reached: the window opens every day.
	return t
}
