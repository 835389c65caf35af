package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// File is one parsed configuration file (or the environment, parsed the
// same way).
type File struct {
	Path           string
	DefaultCatalog string
	// Catalogs maps a lower-cased catalog name to its properties, keys
	// lower-cased (PyIceberg looks names and keys up case-insensitively).
	Catalogs map[string]map[string]string
	// URIVars names, for the environment, the variable that set each
	// catalog's uri (for error messages).
	URIVars map[string]string
}

// Names returns the catalog names of f, sorted.
func (f *File) Names() []string {
	names := make([]string, 0, len(f.Catalogs))
	for n := range f.Catalogs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ParseFile parses a configuration file's content. path only names the
// file in errors.
func ParseFile(data []byte, path string) (*File, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	top := asText(&root)
	doc, ok := top.(map[string]any)
	if !ok && top != nil {
		return nil, fmt.Errorf("config file %s: want a mapping (catalog: ..., default-catalog: ...)", path)
	}
	f := &File{Path: path, Catalogs: map[string]map[string]string{}}
	for k, v := range doc {
		switch strings.ToLower(k) {
		case "default-catalog":
			s, ok := scalar(v)
			if !ok {
				return nil, fmt.Errorf("config file %s: default-catalog must be a name", path)
			}
			f.DefaultCatalog = strings.ToLower(s)
		case "catalog":
			if v == nil {
				continue
			}
			cats, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("config file %s: catalog must map catalog names to properties", path)
			}
			for name, props := range cats {
				m, ok := props.(map[string]any)
				if !ok && props != nil {
					return nil, fmt.Errorf("config file %s: catalog.%s must map property names to values", path, name)
				}
				flat := map[string]string{}
				if err := flatten(flat, "", m); err != nil {
					return nil, fmt.Errorf("config file %s: catalog.%s: %w", path, name, err)
				}
				f.Catalogs[strings.ToLower(name)] = flat
			}
		}
		// Other keys belong to PyIceberg (max-workers, downcast-ns-...) and
		// mean nothing to icectl.
	}
	return f, nil
}

// flatten turns nested maps into dotted keys: {s3: {endpoint: x}} is
// s3.endpoint=x.
func flatten(out map[string]string, prefix string, m map[string]any) error {
	for k, v := range m {
		key := prefix + strings.ToLower(k)
		if sub, ok := v.(map[string]any); ok {
			if err := flatten(out, key+".", sub); err != nil {
				return err
			}
			continue
		}
		s, ok := scalar(v)
		if !ok {
			return fmt.Errorf("property %s: want a single value", key)
		}
		out[key] = s
	}
	return nil
}

// asText turns a parsed YAML document into maps, lists and strings, each
// scalar the text as written: PyIceberg reads its file with strictyaml,
// which types nothing, so an account id 012345678901 stays that and does
// not become a number. An empty value (key:) or null is nil.
func asText(n *yaml.Node) any {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return asText(n.Content[0])
	case yaml.AliasNode:
		return asText(n.Alias)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = asText(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		l := make([]any, len(n.Content))
		for i, c := range n.Content {
			l[i] = asText(c)
		}
		return l
	}
	if n.Tag == "!!null" {
		return nil
	}
	return n.Value
}

// scalar renders a YAML scalar as the string a property holds.
func scalar(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", true
	case string:
		return x, true
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(x), true
	}
	return "", false
}

// LoadFile reads and parses the file at path. A missing file is (nil, nil).
func LoadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read config file: %w", err)
	}
	return ParseFile(data, path)
}

// Lookup is how the resolver sees its surroundings.
type Lookup struct {
	Getenv func(string) string
	// Environ is the environment as KEY=VALUE; only PYICEBERG_* and
	// ICECTL_* entries are looked at.
	Environ []string
	// Cwd is the working directory, the last place PyIceberg looks.
	Cwd string
}

func (l Lookup) getenv(k string) string {
	if l.Getenv == nil {
		return ""
	}
	return l.Getenv(k)
}

// IcectlFile loads icectl's configuration file: $ICECTL_CONFIG when set
// (then it must exist), else $HOME/.icectl.yaml when present.
func IcectlFile(l Lookup) (*File, error) {
	if p := l.getenv("ICECTL_CONFIG"); p != "" {
		f, err := LoadFile(p)
		if err == nil && f == nil {
			return nil, fmt.Errorf("config file %s (from $ICECTL_CONFIG) does not exist", p)
		}
		return f, err
	}
	if home := l.getenv("HOME"); home != "" {
		return LoadFile(filepath.Join(home, ".icectl.yaml"))
	}
	return nil, nil
}

// PyIcebergFile loads the first .pyiceberg.yaml found in $PYICEBERG_HOME,
// $HOME, then the working directory: PyIceberg's own search order.
func PyIcebergFile(l Lookup) (*File, error) {
	for _, dir := range []string{l.getenv("PYICEBERG_HOME"), l.getenv("HOME"), l.Cwd} {
		if dir == "" {
			continue
		}
		f, err := LoadFile(filepath.Join(dir, ".pyiceberg.yaml"))
		if err != nil || f != nil {
			return f, err
		}
	}
	return nil, nil
}
