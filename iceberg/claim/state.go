package claim

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/icectl/icectl/iceberg/spec"
)

const (
	// RefName is the tag whose existence is the claim: a taker asserts it
	// does not exist.
	RefName = "icectl-claim"
	// tokenPrefix starts the name of the tag that names one claim.
	tokenPrefix = RefName + "-"
	// Property holds who holds the claim, as JSON (see Info).
	Property = "icectl.claim"
)

// IsRef reports whether a ref name is one of the claim's tags. Commands
// that list or change refs use it to mark them and to keep users from
// dropping them by hand; expire uses it so a claim never keeps a snapshot.
func IsRef(name string) bool {
	return name == RefName || strings.HasPrefix(name, tokenPrefix)
}

// Info says who holds a table's claim and until when.
type Info struct {
	Owner string    `json:"owner"` // host:pid of the holder
	Verb  string    `json:"verb"`  // what the holder is doing
	Since time.Time `json:"since"` // when it was taken
	// Until is when the lease ends unless renewed: the claim tag's
	// snapshot timestamp plus its max-ref-age-ms.
	Until time.Time `json:"until"`
	// Token names this claim (its tag is RefName-Token); empty when the
	// claim tag stands without one (made by hand).
	Token string `json:"token"`
	// Renewed is when the claim was last taken or renewed (zero when a
	// claim made before icectl recorded it).
	Renewed time.Time `json:"renewed"`
	// Process is the holder's process, to tell on its host whether it
	// still runs (see HolderGone); nil when not recorded.
	Process *Process `json:"process,omitempty"`
}

// Holder is who holds it, for messages: "host:pid (verb)".
func (i Info) Holder() string {
	who := i.Owner
	if who == "" {
		who = "an unknown holder"
	}
	if i.Verb != "" {
		who += " (" + i.Verb + ")"
	}
	return who
}

// Expired reports whether the lease ended at now.
func (i Info) Expired(now time.Time) bool { return !now.Before(i.Until) }

// state is what one version of a table's metadata says about its claim.
type state struct {
	mutex  *spec.SnapshotRef // the RefName tag; nil when absent
	info   Info              // the holder, when mutex is set
	tokens []string          // every token tag's name, sorted
}

// holderRef is the name of the holder's token tag, "" when none.
func (s state) holderRef() string {
	if s.info.Token == "" {
		return ""
	}
	return tokenPrefix + s.info.Token
}

// propertyValue is the JSON of Property.
type propertyValue struct {
	Owner string `json:"owner"`
	Verb  string `json:"verb"`
	Since string `json:"since"`
	Until string `json:"until"`
	Token string `json:"token"`
	// Renewed and Process were added later: a claim without them is
	// never judged gone before its lease ends.
	Renewed string   `json:"renewed,omitempty"`
	Process *Process `json:"process,omitempty"`
}

func encodeProperty(i Info) string {
	v := propertyValue{Owner: i.Owner, Verb: i.Verb, Token: i.Token, Process: i.Process,
		Since: i.Since.UTC().Format(time.RFC3339), Until: i.Until.UTC().Format(time.RFC3339)}
	if !i.Renewed.IsZero() {
		v.Renewed = i.Renewed.UTC().Format(time.RFC3339Nano)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func decodeProperty(s string) (propertyValue, bool) {
	var p propertyValue
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return propertyValue{}, false
	}
	return p, true
}

// read reads the claim from md. The tags decide (they are what commits
// assert); the property only describes the holder, and is believed only
// when it names the holder's token.
func read(md *spec.TableMetadata) state {
	var s state
	for name, r := range md.Refs {
		switch {
		case name == RefName:
			r := r
			s.mutex = &r
		case strings.HasPrefix(name, tokenPrefix):
			s.tokens = append(s.tokens, name)
		}
	}
	slices.Sort(s.tokens)
	if s.mutex == nil {
		return s
	}
	s.info.Until = refUntil(md, *s.mutex)
	p, ok := decodeProperty(md.Properties[Property])
	if ok && p.Token != "" && slices.Contains(s.tokens, tokenPrefix+p.Token) {
		s.info.Owner, s.info.Verb, s.info.Token, s.info.Process = p.Owner, p.Verb, p.Token, p.Process
		s.info.Since, _ = time.Parse(time.RFC3339, p.Since)
		s.info.Renewed, _ = time.Parse(time.RFC3339Nano, p.Renewed)
		return s
	}
	if len(s.tokens) == 1 {
		s.info.Token = strings.TrimPrefix(s.tokens[0], tokenPrefix)
	}
	return s
}

// refUntil is when a claim tag expires: its snapshot's timestamp plus its
// max-ref-age-ms, as Java's expire_snapshots judges a ref's age. A tag
// without either has already expired.
func refUntil(md *spec.TableMetadata, r spec.SnapshotRef) time.Time {
	snap, ok := md.SnapshotByID(r.SnapshotID)
	if !ok || r.MaxRefAgeMS == nil {
		return time.UnixMilli(0)
	}
	return time.UnixMilli(snap.TimestampMS + *r.MaxRefAgeMS)
}

// head is the snapshot the claim's tags point at: main's head, else the
// newest snapshot; nil when the table has none.
func head(md *spec.TableMetadata) *spec.Snapshot {
	if s := md.CurrentSnapshot(); s != nil {
		return s
	}
	var newest *spec.Snapshot
	for i := range md.Snapshots {
		if s := &md.Snapshots[i]; newest == nil || s.TimestampMS > newest.TimestampMS {
			newest = s
		}
	}
	return newest
}

// tagUntil is a tag on snap that expires at until (never before the
// snapshot's own time plus one millisecond: max-ref-age-ms must be > 0).
func tagUntil(snap *spec.Snapshot, until time.Time) spec.SnapshotRef {
	age := max(until.UnixMilli()-snap.TimestampMS, 1)
	return spec.SnapshotRef{SnapshotID: snap.SnapshotID, Type: spec.RefTypeTag, MaxRefAgeMS: &age}
}

// Repoint returns the update that moves the claim tag name of md to
// snapshot to, keeping the instant it expires, or removes it when that
// instant has passed for a tag on to. Expire uses it for a claim tag whose
// snapshot it removes: the claim must survive, and keep no snapshot.
func Repoint(md *spec.TableMetadata, name string, to *spec.Snapshot) spec.Update {
	r, ok := md.Refs[name]
	if !ok {
		return spec.RemoveSnapshotRef{RefName: name}
	}
	until := refUntil(md, r)
	if to == nil || until.UnixMilli() <= to.TimestampMS {
		return spec.RemoveSnapshotRef{RefName: name}
	}
	return spec.SetSnapshotRef{RefName: name, Ref: tagUntil(to, until)}
}

// assertRef asserts that ref name stands where md has it (or is absent).
func assertRef(md *spec.TableMetadata, name string) spec.Requirement {
	if r, ok := md.Refs[name]; ok {
		id := r.SnapshotID
		return spec.AssertRefSnapshotID{Ref: name, SnapshotID: &id}
	}
	return spec.AssertRefSnapshotID{Ref: name}
}

// Unchanged reports whether after is before with at most claims taken,
// renewed or released in between: the same snapshots and refs (the
// claim's tags aside), schemas, specs, sort orders and properties (the
// claim's aside). A verb that planned on before, read-only, ahead of
// taking the claim may then run that plan on after instead of planning
// again: nothing a plan reads has changed.
func Unchanged(before, after *spec.TableMetadata) bool {
	b, a := before, after
	same := b.FormatVersion == a.FormatVersion && b.TableUUID == a.TableUUID && b.Location == a.Location &&
		b.LastSequenceNumber == a.LastSequenceNumber && len(b.Snapshots) == len(a.Snapshots) &&
		optEqual(b.CurrentSnapshotID, a.CurrentSnapshotID) && optEqual(b.NextRowID, a.NextRowID) &&
		b.CurrentSchemaID == a.CurrentSchemaID && len(b.Schemas) == len(a.Schemas) && b.LastColumnID == a.LastColumnID &&
		b.DefaultSpecID == a.DefaultSpecID && len(b.PartitionSpecs) == len(a.PartitionSpecs) && b.LastPartitionID == a.LastPartitionID &&
		b.DefaultSortOrderID == a.DefaultSortOrderID && len(b.SortOrders) == len(a.SortOrders)
	if !same {
		return false
	}
	refs := func(md *spec.TableMetadata) map[string]int64 {
		out := map[string]int64{}
		for name, r := range md.Refs {
			if !IsRef(name) {
				out[name] = r.SnapshotID
			}
		}
		return out
	}
	props := func(md *spec.TableMetadata) map[string]string {
		out := maps.Clone(md.Properties)
		delete(out, Property)
		return out
	}
	return maps.Equal(refs(b), refs(a)) && maps.Equal(props(b), props(a))
}

func optEqual(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
