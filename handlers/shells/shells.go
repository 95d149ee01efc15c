package shells

import "hostcore/sandbox/process"

// Available reports whether id names a shell of the catalog that is
// available on this platform.
func Available(id string) bool {
	for _, sh := range process.Catalog() {
		if sh.ID == id {
			return sh.Available
		}
	}
	return false
}

// Effective is the persisted default (chosen, nil for none) when it is
// still available, else the first available shell of the catalog (design
// section 5), "" if none is.
func Effective(chosen *string) string {
	if chosen != nil && Available(*chosen) {
		return *chosen
	}
	for _, sh := range process.Catalog() {
		if sh.Available {
			return sh.ID
		}
	}
	return ""
}

// Shell is one shell of shells.list.
type Shell struct {
	ID        string `json:"id"`
	Dialect   string `json:"dialect"`
	Path      string `json:"path"`
	Available bool   `json:"available"`
}

// List is shells.list's answer: the persisted default (null when none
// is), the shell in effect (null when none is available) and every shell
// of the catalog. Its members stand in the order the wire has them.
type List struct {
	DefaultCommandShell *string `json:"defaultCommandShell"`
	EffectiveShell      *string `json:"effectiveShell"`
	Shells              []Shell `json:"shells"`
}

// ListOf is shells.list's answer with chosen as the persisted default.
func ListOf(chosen *string) List {
	l := List{Shells: []Shell{}, DefaultCommandShell: chosen}
	for _, sh := range process.Catalog() {
		l.Shells = append(l.Shells, Shell{sh.ID, sh.Dialect, sh.Path, sh.Available})
	}
	if eff := Effective(chosen); eff != "" {
		l.EffectiveShell = &eff
	}
	return l
}
