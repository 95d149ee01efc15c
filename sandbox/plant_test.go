package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestSymlinkPlantedInMissingParent: a target whose parent did not exist
// when it was resolved (and approved) cannot be redirected by a symlink
// planted at the missing component before the write (found in review: the
// write landed in the directory the link pointed to).
func TestSymlinkPlantedInMissingParent(t *testing.T) {
	for _, external := range []bool{true, false} {
		name := map[bool]string{true: "external", false: "workspace"}[external]
		t.Run(name, func(t *testing.T) {
			top, _ := filepath.EvalSymlinks(t.TempDir())
			ws := filepath.Join(top, "ws")
			home := filepath.Join(top, "home")
			os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
			os.MkdirAll(filepath.Join(ws, "secrets"), 0o700)
			roots := Roots{Workspace: ws, Scratch: filepath.Join(top, "scratch")}

			target, victimDir := filepath.Join(home, "newproj", "authorized_keys"), filepath.Join(home, ".ssh")
			linkAt, linkTo := filepath.Join(home, "newproj"), ".ssh"
			if !external {
				target, victimDir = "newproj/authorized_keys", filepath.Join(ws, "secrets")
				linkAt, linkTo = filepath.Join(ws, "newproj"), "secrets"
			}
			res, err := roots.Resolve(target)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := roots.Recheck(res); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(linkTo, linkAt); err != nil {
				t.Fatal(err)
			}
			_, err = WriteAtomic(res, []byte("ssh-ed25519 attacker"))
			if !errors.Is(err, ErrChanged) {
				t.Fatalf("write through a planted link: err = %v, want ErrChanged", err)
			}
			if _, err := os.Stat(filepath.Join(victimDir, "authorized_keys")); err == nil {
				t.Fatal("the write landed where the planted link points")
			}
			if err := CreateExclusive(res, []byte("x")); !errors.Is(err, ErrChanged) {
				t.Fatalf("CreateExclusive through a planted link: %v", err)
			}
		})
	}
}
