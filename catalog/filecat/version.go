package filecat

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

const versionHintFile = "version-hint.text"

// hadoopVersion parses "v12.metadata.json" or "v12.gz.metadata.json".
func hadoopVersion(name string) (int, bool) {
	rest, ok := strings.CutSuffix(name, ".metadata.json")
	if !ok {
		return 0, false
	}
	rest = strings.TrimSuffix(rest, ".gz")
	digits, ok := strings.CutPrefix(rest, "v")
	if !ok || digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

func versionFileNames(v int) [2]string {
	return [2]string{fmt.Sprintf("v%d.metadata.json", v), fmt.Sprintf("v%d.gz.metadata.json", v)}
}

// versionFile returns the name of the metadata file of version v in dir,
// plain or gzip-named, and whether one exists.
func versionFile(dir string, v int) (string, bool) {
	for _, n := range versionFileNames(v) {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return n, true
		}
	}
	return "", false
}

// currentVersion finds the newest version in a metadata directory the way
// Java's HadoopTableOperations does: start from version-hint.text (or the
// highest vN file when the hint is missing or bad), then move on while the
// next version exists, so a commit whose hint update failed still counts.
func currentVersion(dir string) (int, string, error) {
	v := -1
	if data, err := os.ReadFile(filepath.Join(dir, versionHintFile)); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && n >= 0 {
			if _, ok := versionFile(dir, n); ok {
				v = n
			}
		}
	}
	if v < 0 {
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, "", err
		}
		for _, e := range entries {
			if n, ok := hadoopVersion(e.Name()); ok && n > v {
				v = n
			}
		}
	}
	if v < 0 {
		return 0, "", fs.ErrNotExist
	}
	for {
		if _, ok := versionFile(dir, v+1); !ok {
			break
		}
		v++
	}
	name, _ := versionFile(dir, v)
	return v, name, nil
}

// claimVersion makes data visible as version v in dir, failing with
// fs.ErrExist when that version exists. The data is written and synced to a
// temporary file first, then hard-linked to its final name: link never
// replaces an existing file, so of two writers claiming v exactly one wins,
// and the winner's file is complete the moment it appears.
func claimVersion(dir string, v int, gz bool, data []byte) (string, error) {
	names := versionFileNames(v)
	name, other := names[0], names[1]
	if gz {
		name, other = other, name
	}
	tmp := filepath.Join(dir, "."+uuid.NewString()+".tmp")
	if err := writeSynced(tmp, data); err != nil {
		return "", err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, filepath.Join(dir, name)); err != nil {
		return "", err
	}
	// The same version under the other codec's name means another writer
	// claimed it too; the one that sees the other's file backs off, so at
	// most one survives.
	if _, err := os.Stat(filepath.Join(dir, other)); err == nil {
		os.Remove(filepath.Join(dir, name))
		return "", fmt.Errorf("version %d claimed under %s: %w", v, other, fs.ErrExist)
	}
	return name, nil
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

// writeVersionHint replaces version-hint.text atomically (temp + rename).
func writeVersionHint(dir string, v int) error {
	tmp := filepath.Join(dir, "."+uuid.NewString()+".hint.tmp")
	if err := writeSynced(tmp, []byte(strconv.Itoa(v))); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, versionHintFile)); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
