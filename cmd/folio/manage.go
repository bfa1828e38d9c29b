package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/foliodb/folio/client"
)

// The administration commands: applications, namespaces and signing keys
// of a running server, with an admin's (or the owner's) credentials,
// through the client package. Unlike the data commands, they print tables
// unless --json is given (their rows say tables).
//
//	folio app create --name N [--description D] [--role R] [--namespace NS]
//	folio app list
//	folio app rotate ID
//	folio app delete ID
//	folio namespace create NAME [--id N]
//	folio namespace list
//	folio namespace delete NAME
//	folio key rotate

// appRecord is an application as the commands print it: the API's fields,
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
func (s *invocation) print(records []map[string]any, columns ...string) error {
	return printRecords(s.out.w, !s.out.table, records, columns...)
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

func appCreate(fs *flag.FlagSet) runFunc {
	name := fs.String("name", "", "the application's name (required)")
	description := fs.String("description", "", "what it is for")
	role := fs.String("role", "", "reader, editor, admin or owner (default: editor)")
	ns := fs.String("namespace", "", "its namespace (default: yours; another needs the owner)")
	owner := fs.Bool("owner", false, "make another owner: --role owner in the default namespace")
	return func(s *invocation, _ []string) error {
		if *owner {
			*role = "owner"
		}
		app, err := s.c.CreateApplication(s.ctx, client.NewApplication{Name: *name, Description: *description, Role: *role, Namespace: *ns})
		if err != nil {
			return err
		}
		return printApp(s, appRecord(app))
	}
}

func appList(s *invocation, _ []string) error {
	apps, err := s.c.ListApplications(s.ctx)
	if err != nil {
		return err
	}
	recs := make([]map[string]any, len(apps))
	for i := range apps {
		recs[i] = appRecord(&apps[i])
	}
	return s.print(recs, appColumns...)
}

func appRotate(s *invocation, a []string) error {
	app, err := s.c.RotateApplicationSecret(s.ctx, a[0])
	if err != nil {
		return err
	}
	return printApp(s, appRecord(app))
}

func appDelete(s *invocation, a []string) error {
	if err := s.c.DeleteApplication(s.ctx, a[0]); err != nil {
		return err
	}
	return s.print([]map[string]any{{"id": a[0], "deleted": true}}, "id", "deleted")
}

// printApp prints one application, with its secret if it has one: the
// only time it is shown.
func printApp(s *invocation, app map[string]any) error {
	if !s.out.table {
		return s.print([]map[string]any{app})
	}
	w := tabwriter.NewWriter(s.out.w, 0, 4, 2, ' ', 0)
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
		fmt.Fprintln(s.out.w, "\nThe secret is shown this once: keep it now.")
	}
	return nil
}

func namespaceCreate(fs *flag.FlagSet) runFunc {
	id := fs.Int64("id", 0, "its id (default: the next free one)")
	return func(s *invocation, a []string) error {
		msg, err := s.c.CreateNamespace(s.ctx, a[0], *id)
		if err != nil {
			return err
		}
		return s.print([]map[string]any{{"status": "created", "message": msg}}, "status", "message")
	}
}

func namespaceList(s *invocation, _ []string) error {
	list, err := s.c.ListNamespaces(s.ctx)
	if err != nil {
		return err
	}
	recs := make([]map[string]any, len(list))
	for i, ns := range list {
		recs[i] = map[string]any{"id": ns.ID, "name": ns.Name}
	}
	return s.print(recs, "id", "name")
}

func namespaceDelete(s *invocation, a []string) error {
	msg, err := s.c.DeleteNamespace(s.ctx, a[0])
	if err != nil {
		return err
	}
	return s.print([]map[string]any{{"status": "deleted", "message": msg}}, "status", "message")
}

func keyRotate(s *invocation, _ []string) error {
	id, err := s.c.RotateSigningKey(s.ctx)
	if err != nil {
		return err
	}
	return s.print([]map[string]any{{"key_id": id}}, "key_id")
}
