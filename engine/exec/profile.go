package exec

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/proc"
	"github.com/batonhq/baton/transcript"
)

// Rule recognises one kind of output line. A rule with neither Fields nor
// Pattern matches nothing.
type Rule struct {
	// Fields must all hold in a JSON line: the key is a dotted path into
	// the object ("type", "error.kind"), the value the field's text (a
	// string as is, a number or boolean as JSON writes it, "null").
	Fields map[string]string
	// Pattern must match the raw line.
	Pattern *regexp.Regexp
	// ID names where the value the rule reads is (the native session id,
	// the model, the version): a dotted path into a JSON line, or, for a
	// text line, the Pattern's subexpression named "id" (or its first one)
	// when ID is "". Used by Output.NativeID, Output.Model and
	// Output.Version.
	ID string
}

// Output says how the native id and readiness are read from the child's
// standard output, and how each line becomes transcript events.
type Output struct {
	// JSON reads each output line as a JSON object: rules match with their
	// Fields (and Pattern, when set), and a line that is not a JSON object
	// matches no rule. False reads each line as text: rules match with
	// their Pattern.
	JSON bool
	// NativeID rules recognise the line that carries the native session id.
	// The first id seen wins.
	NativeID []Rule
	// Model and Version rules recognise the line that says which model the
	// CLI really uses and its own version (the process's Actual then
	// says so). The first value seen wins;
	// none means the CLI does not say.
	Model, Version []Rule
	// Ready rules recognise the line that confirms the session accepted its
	// first turn. Readiness needs a native id: one seen earlier, or on
	// the same line, or, for a resume, the id that was resumed.
	Ready []Rule
	// Reject rules recognise a line that refuses the first turn; Ready
	// then returns engine.ErrReadyRejected and the launch is stopped.
	Reject []Rule
	// TurnEnd rules recognise the line that ends a turn: the transcript is
	// synced to disk there (and always when the child exits).
	TurnEnd []Rule
	// SessionMissing matches a line (standard output or error) that says
	// a resumed native session does not exist; a readiness failure after
	// it matches engine.ErrSessionMissing as well.
	SessionMissing *regexp.Regexp
	// AuthFailed matches a line that says the credentials were refused; a
	// readiness failure after it matches engine.ErrAuth as well.
	AuthFailed *regexp.Regexp
	// Events turns one output line into transcript events. Nil records
	// each non-blank line as an agent message. A line for which it returns
	// no event is not recorded.
	Events func(line []byte) []transcript.Event
	// Usage, when set, makes the UsageMeter that reads one launch's
	// context usage (engine.ExitStatus.Usage); it is called once per
	// launch. Nil reports none: the exit's Usage stays zero.
	Usage func() UsageMeter
}

// Profile describes one agent CLI: how to build its command line for a
// fresh start, a resume and a report-only turn, which configurations it
// accepts, and how its output is read.
//
// Templates are argument lists whose elements may hold placeholders,
// replaced at each launch:
//
//	{prompt}        the opening prompt
//	{prompt_file}   the path of a file that holds the opening prompt
//	{native_id}     the native session being resumed
//	{model} {effort} {permission}   the configuration's fields
//	{workspace} {session} {launch} {dir}
//	{handoff} {attempt} {report_token}   a report-only turn's credentials
//	{file:NAME}     the path of the launch file NAME (see LaunchExtra)
//
// An element that is exactly "{flags}" in Fresh or Resume is replaced by the
// configuration flags (Model, Effort, then Permission or ReportOnly); without
// it they are appended. Anyone on the machine can read a process's
// arguments, so {report_token} belongs in Env or a launch file, never in argv,
// and a prompt that must stay private is better passed with Stdin or
// {prompt_file} (written, readable only by the host's user, when a template
// names it, and removed when the launch ends) than with {prompt}.
type Profile struct {
	// Name names the profile in errors.
	Name string
	// Command is the program: a path, or a name looked up in PATH.
	Command string
	// Fresh is the argument template of a fresh start.
	Fresh []string
	// Resume is the argument template of a resume by native id; empty
	// means the CLI cannot resume (a resume request fails at Start with
	// engine.ErrUnsupportedConfig).
	Resume []string
	// Model, Effort and Permission are added when the configuration sets
	// the field. Permission applies to normal turns only.
	Model, Effort, Permission []string
	// ReportOnly is added for a report-only turn instead of Permission: it
	// must restrict the CLI to read-only tools plus the report tool.
	ReportOnly []string
	// Models, Efforts and PermissionModes list the accepted values; nil
	// accepts any (Validate).
	Models, Efforts, PermissionModes []string
	// Env entries ("KEY=value" templates) are added to the child's
	// environment.
	Env []string
	// LaunchExtra, when set, returns the files, flags and environment of
	// one launch (called once per launch): its Files are written, mode
	// 0600, into a private directory removed when the launch ends (their
	// paths are {file:NAME}), and its Flags, templates where {file:NAME}
	// names any file of the launch, follow the configuration flags
	// (ReportOnly included). An error fails Start with it.
	LaunchExtra func(ctx context.Context, req engine.StartRequest) (Extra, error)
	// Stdin writes the opening prompt to the child's standard input and
	// then closes it.
	Stdin bool
	// Output says how the child's output is read.
	Output Output
	// Reconfigure says a native session can be resumed under another
	// model, effort or permission mode of the same account (the engine is
	// then an engine.Reconfigurer that says so).
	Reconfigure bool
	// Windows are context window sizes in tokens by model, for a launch
	// whose usage the output reports without a window: the entry of the
	// configuration's model ("" for a launch that names none) becomes the
	// usage's Window. A window the output names wins. Claude and Codex
	// leave it nil (both CLIs report their window); set entries to
	// override a window they do not report.
	Windows map[string]int64
}

// Extra is what Profile.LaunchExtra adds to one launch.
type Extra struct {
	// Files are written for the launch (name -> content, mode 0600).
	Files map[string][]byte
	// Flags are argument templates added after the configuration flags.
	Flags []string
	// Env entries ("KEY=value", taken as they are) are added to the
	// child's environment after the profile's: the place for a secret
	// the CLI reads from its environment.
	Env []string
}

// fields returns the Rule.Fields of the key, value pairs kv.
func fields(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// validate checks cfg against the profile's accepted values.
func (p *Profile) validate(cfg baton.EngineConfig) error {
	cfg = cfg.Normalize()
	if cfg.ReasoningEffort != "" && len(p.Effort) == 0 {
		return baton.Errorf(engine.ErrUnsupportedConfig, "%s: no reasoning effort flag", p.Name)
	}
	if cfg.PermissionMode != "" && len(p.Permission) == 0 {
		return baton.Errorf(engine.ErrUnsupportedConfig, "%s: no permission flag", p.Name)
	}
	return errors.Join(proc.Accept(p.Name, "model", cfg.Model, p.Models), proc.Accept(p.Name, "reasoning effort", cfg.ReasoningEffort, p.Efforts),
		proc.Accept(p.Name, "permission mode", cfg.PermissionMode, p.PermissionModes))
}

// namesPromptFile reports whether a template of the profile, or one of the
// launch's extra flags, names {prompt_file}.
func (p *Profile) namesPromptFile(extra []string) bool {
	return slices.ContainsFunc(slices.Concat(p.Fresh, p.Resume, p.Model, p.Effort, p.Permission, p.ReportOnly, p.Env, extra), func(s string) bool {
		return strings.Contains(s, "{prompt_file}")
	})
}

// vars are the placeholder values of one launch.
type vars map[string]string

// placeholder matches what may be a placeholder: braces around a name
// without braces.
var placeholder = regexp.MustCompile(`\{[^{}]*\}`)

// expand replaces the placeholders of s; braces around anything else (JSON,
// say) stay as they are.
func (v vars) expand(s string) string {
	return placeholder.ReplaceAllStringFunc(s, func(m string) string {
		if val, ok := v[m[1:len(m)-1]]; ok {
			return val
		}
		return m
	})
}

func (v vars) expandAll(dst []string, tmpl []string) []string {
	for _, s := range tmpl {
		dst = append(dst, v.expand(s))
	}
	return dst
}

// argv builds the child's arguments (without the program) for req.
func (p *Profile) argv(req engine.StartRequest, v vars, extra []string) ([]string, error) {
	tmpl := p.Fresh
	if req.Mode == engine.Resume {
		if len(p.Resume) == 0 {
			return nil, baton.Errorf(engine.ErrUnsupportedConfig, "%s: cannot resume a native session", p.Name)
		}
		if req.NativeID == "" {
			return nil, baton.Errorf(baton.ErrInvalid, "%s: resume without a native id", p.Name)
		}
		tmpl = p.Resume
	}
	cfg := req.Config.Normalize()
	var flags []string
	if cfg.Model != "" {
		flags = v.expandAll(flags, p.Model)
	}
	if cfg.ReasoningEffort != "" {
		flags = v.expandAll(flags, p.Effort)
	}
	if req.Turn == transcript.ReportOnly {
		flags = v.expandAll(flags, p.ReportOnly)
	} else if cfg.PermissionMode != "" {
		flags = v.expandAll(flags, p.Permission)
	}
	flags = v.expandAll(flags, extra)
	// The element "{flags}" is found in the template, not in its
	// expansion: a value that reads "{flags}" is an argument like any.
	out := v.expandAll(nil, tmpl)
	if i := slices.Index(tmpl, "{flags}"); i >= 0 {
		return slices.Replace(out, i, i+1, flags...), nil
	}
	return append(out, flags...), nil
}

// match reports whether any rule matches the line (obj is its decoded
// JSON object, nil for a text line or a line that is not an object).
func matchAny(rules []Rule, line []byte, obj map[string]any) (Rule, bool) {
	for _, r := range rules {
		if r.match(line, obj) {
			return r, true
		}
	}
	return Rule{}, false
}

func (r Rule) match(line []byte, obj map[string]any) bool {
	if len(r.Fields) == 0 && r.Pattern == nil || len(r.Fields) > 0 && obj == nil {
		return false
	}
	for path, want := range r.Fields {
		if got, ok := fieldText(obj, path); !ok || got != want {
			return false
		}
	}
	return r.Pattern == nil || r.Pattern.Match(line)
}

// id extracts the native id a matching rule names.
func (r Rule) id(line []byte, obj map[string]any) string {
	if obj != nil && r.ID != "" {
		s, _ := fieldText(obj, r.ID)
		return s
	}
	if r.Pattern == nil {
		return ""
	}
	m := r.Pattern.FindSubmatch(line)
	if i := r.Pattern.SubexpIndex("id"); i > 0 && m != nil {
		return string(m[i])
	}
	if len(m) > 1 {
		return string(m[1])
	}
	return ""
}

// fieldText returns the text of a dotted path in obj, decoded with
// json.Decoder.UseNumber.
func fieldText(obj map[string]any, path string) (string, bool) {
	var cur any = obj
	for part := range strings.SplitSeq(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false
		}
		if cur, ok = m[part]; !ok {
			return "", false
		}
	}
	switch x := cur.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case nil:
		return "null", true
	case json.Number:
		return x.String(), true
	}
	return "", false
}
