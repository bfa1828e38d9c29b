package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/foliodb/folio/client"
)

// The management commands: applications, namespaces and signing keys of a
// running server, through its HTTP API, with an admin's (or the owner's)
// credentials, through the client package.
//
//	folio app create --name N [--description D] [--role R] [--namespace NS]
//	folio app list
//	folio app rotate ID
//	folio app delete ID
//	folio namespace create NAME [--id N]
//	folio namespace list
//	folio namespace delete NAME
//	folio key rotate

// remote is a connection to a server's API with credentials, and how to
// print what it answers.
type remote struct {
	c      *client.Client
	asJSON bool
	out    io.Writer
}

// remoteFlags adds the flags every management command takes: those of
// the data commands (docs/cli.md). Unlike theirs, the management
// commands print tables unless --json is given.
func remoteFlags(fs *flag.FlagSet) func(out io.Writer) (*remote, error) {
	cn := connectionFlags(fs, os.Getenv)
	return func(out io.Writer) (*remote, error) {
		if u := os.Getenv("FOLIO_URL"); u != "" && !flagSet(fs, "url") {
			*cn.url = u
		}
		c, err := cn.open()
		if err != nil {
			return nil, err
		}
		return &remote{c: c, asJSON: *cn.asJSON, out: out}, nil
	}
}

// record is an application as the commands print it: the API's fields,
// times in RFC 3339 for a person.
func appRecord(a *client.Application) map[string]any {
	rec := map[string]any{"id": a.ID, "name": a.Name, "namespace": a.Namespace, "role": a.Role,
		"created_at": a.CreatedAt.Format(time.RFC3339)}
	for k, v := range map[string]string{"description": a.Description, "created_by": a.CreatedBy, "updated_by": a.UpdatedBy, "secret": a.Secret} {
		if v != "" {
			rec[k] = v
		}
	}
	if !a.UpdatedAt.IsZero() {
		rec["updated_at"] = a.UpdatedAt.Format(time.RFC3339)
	}
	return rec
}

// print prints records: JSON lines with --json, a table otherwise, with
// the columns given (a record's fields by their JSON names).
func (r *remote) print(records []map[string]any, columns ...string) error {
	return printRecords(r.out, r.asJSON, records, columns...)
}

// printRecords is the management and backup commands' output: JSON lines,
// or a table of the columns given.
func printRecords(out io.Writer, asJSON bool, records []map[string]any, columns ...string) error {
	if asJSON {
		enc := json.NewEncoder(out)
		for _, rec := range records {
			if err := enc.Encode(rec); err != nil {
				return err
			}
		}
		return nil
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, strings.ToUpper(strings.Join(columns, "\t")))
	for _, rec := range records {
		cells := make([]string, len(columns))
		for i, c := range columns {
			cells[i] = cell(rec[c])
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	return w.Flush()
}

func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return "-"
	case json.Number:
		return x.String()
	case float64:
		return fmt.Sprint(int64(x))
	case int64:
		return fmt.Sprint(x)
	}
	return fmt.Sprint(v)
}

// appColumns are an application's fields a table shows.
var appColumns = []string{"id", "name", "namespace", "role", "description", "created_at", "created_by"}

// appCommand is `folio app`.
// The subcommands of app and namespace, for help and suggestions.
var (
	appSubcommands       = []string{"create", "list", "rotate", "delete"}
	namespaceSubcommands = []string{"create", "list", "delete"}
)

func appCommand(args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: folio app create|list|rotate|delete [flags] (folio app create -h)")
	}
	if isHelp(args[0]) {
		groupUsage(out, "app", appSubcommands, "folio app SUBCOMMAND -h for each")
		return nil
	}
	fs := flag.NewFlagSet("app "+args[0], flag.ContinueOnError)
	connect := remoteFlags(fs)
	switch args[0] {
	case "create":
		name := fs.String("name", "", "the application's name (required)")
		description := fs.String("description", "", "what it is for")
		role := fs.String("role", "", "reader, editor, admin or owner (default: editor)")
		ns := fs.String("namespace", "", "its namespace (default: yours; another needs the owner)")
		owner := fs.Bool("owner", false, "make another owner: --role owner in the default namespace")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *owner {
			*role = "owner"
		}
		r, err := connect(out)
		if err != nil {
			return err
		}
		app, err := r.c.CreateApplication(context.Background(), client.NewApplication{Name: *name, Description: *description, Role: *role, Namespace: *ns})
		if err != nil {
			return err
		}
		return r.printApp(appRecord(app))
	case "list":
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		r, err := connect(out)
		if err != nil {
			return err
		}
		apps, err := r.c.ListApplications(context.Background())
		if err != nil {
			return err
		}
		recs := make([]map[string]any, len(apps))
		for i := range apps {
			recs[i] = appRecord(&apps[i])
		}
		return r.print(recs, appColumns...)
	case "rotate", "delete":
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return fmt.Errorf("usage: folio app %s [flags] ID", args[0])
		}
		r, err := connect(out)
		if err != nil {
			return err
		}
		if args[0] == "delete" {
			if err := r.c.DeleteApplication(context.Background(), fs.Arg(0)); err != nil {
				return err
			}
			return r.print([]map[string]any{{"id": fs.Arg(0), "deleted": true}}, "id", "deleted")
		}
		app, err := r.c.RotateApplicationSecret(context.Background(), fs.Arg(0))
		if err != nil {
			return err
		}
		return r.printApp(appRecord(app))
	}
	return usagef("app: unknown subcommand %q%s: want create, list, rotate or delete", args[0], didYouMean(args[0], appSubcommands))
}

// printApp prints one application, with its secret if it has one: the
// only time it is shown.
func (r *remote) printApp(app map[string]any) error {
	if r.asJSON {
		return r.print([]map[string]any{app})
	}
	w := tabwriter.NewWriter(r.out, 0, 4, 2, ' ', 0)
	keys := append([]string{}, appColumns...)
	if _, ok := app["secret"]; ok {
		keys = append(keys, "secret")
	}
	for _, k := range keys {
		fmt.Fprintf(w, "%s\t%s\n", k, cell(app[k]))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if _, ok := app["secret"]; ok {
		fmt.Fprintln(r.out, "\nThe secret is shown this once: keep it now.")
	}
	return nil
}

// namespaceCommand is `folio namespace`.
func namespaceCommand(args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: folio namespace create|list|delete [flags]")
	}
	if isHelp(args[0]) {
		groupUsage(out, "namespace", namespaceSubcommands, "folio namespace SUBCOMMAND -h for each")
		return nil
	}
	fs := flag.NewFlagSet("namespace "+args[0], flag.ContinueOnError)
	connect := remoteFlags(fs)
	switch args[0] {
	case "create":
		id := fs.Int64("id", 0, "its id (default: the next free one)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return errors.New("usage: folio namespace create [flags] NAME")
		}
		r, err := connect(out)
		if err != nil {
			return err
		}
		msg, err := r.c.CreateNamespace(context.Background(), fs.Arg(0), *id)
		if err != nil {
			return err
		}
		return r.print([]map[string]any{{"status": "created", "message": msg}}, "status", "message")
	case "list":
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		r, err := connect(out)
		if err != nil {
			return err
		}
		list, err := r.c.ListNamespaces(context.Background())
		if err != nil {
			return err
		}
		recs := make([]map[string]any, len(list))
		for i, ns := range list {
			recs[i] = map[string]any{"id": ns.ID, "name": ns.Name}
		}
		return r.print(recs, "id", "name")
	case "delete":
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return errors.New("usage: folio namespace delete [flags] NAME (an empty namespace: no databases, no applications)")
		}
		r, err := connect(out)
		if err != nil {
			return err
		}
		msg, err := r.c.DeleteNamespace(context.Background(), fs.Arg(0))
		if err != nil {
			return err
		}
		return r.print([]map[string]any{{"status": "deleted", "message": msg}}, "status", "message")
	}
	return usagef("namespace: unknown subcommand %q%s: want create, list or delete", args[0], didYouMean(args[0], namespaceSubcommands))
}

// keyCommand is `folio key rotate`.
func keyCommand(args []string, out io.Writer) error {
	if len(args) > 0 && isHelp(args[0]) {
		groupUsage(out, "key", []string{"rotate"}, "folio key rotate -h for its flags")
		return nil
	}
	if len(args) == 0 || args[0] != "rotate" {
		return errors.New("usage: folio key rotate [flags]")
	}
	fs := flag.NewFlagSet("key rotate", flag.ContinueOnError)
	connect := remoteFlags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	r, err := connect(out)
	if err != nil {
		return err
	}
	id, err := r.c.RotateSigningKey(context.Background())
	if err != nil {
		return err
	}
	return r.print([]map[string]any{{"key_id": id}}, "key_id")
}
