package finalclient

import (
	"errors"
	"strings"
	"testing"

	"github.com/tigrisdata/tigris-client-go/code"
	"github.com/tigrisdata/tigris-client-go/driver"
	"github.com/tigrisdata/tigris-client-go/filter"
	"github.com/tigrisdata/tigris-client-go/tigris"
)

// Member is a model whose email the schema declares unique. The client's
// tags have no "unique" (it is Folio's own): the schema is sent through
// the driver, as an application with a hand-written schema does, and the
// typed collection reads and writes the model over it.
type Member struct {
	ID    int64  `json:"id" tigris:"primaryKey"`
	Email string `json:"email"`
	Name  string `json:"name,omitempty"`
}

const membersSchema = `{"title":"members","properties":{"id":{"type":"integer"},"email":{"type":"string","unique":true},"name":{"type":"string"}},"primary_key":["id"]}`

// TestUniqueFlow: a unique field through the final client unchanged, over
// its transport: a duplicate insert, replace and update are the client's
// AlreadyExists error naming the field, a document written again with its
// own value is taken, and adding the key over duplicates is refused.
func TestUniqueFlow(t *testing.T) {
	ctx, e, drv := projectFlow(t)
	db := drv.UseDatabase(e.project)
	if err := db.CreateOrUpdateCollection(ctx, "members", driver.Schema(membersSchema)); err != nil {
		t.Fatalf("CreateOrUpdateCollection with a unique field: %v", err)
	}
	c, err := tigris.NewClient(ctx, &tigris.Config{URL: e.url, Project: e.project})
	if err != nil {
		t.Fatalf("tigris.NewClient: %v", err)
	}
	defer c.Close()
	members := tigris.GetCollection[Member](c.GetDatabase())

	if _, err := members.Insert(ctx, &Member{ID: 1, Email: "ann@example.com"}, &Member{ID: 2, Email: "bob@example.com"}); err != nil {
		t.Fatalf("Insert two members: %v", err)
	}
	_, err = members.Insert(ctx, &Member{ID: 3, Email: "ann@example.com"})
	wantUnique(t, "Insert of a taken email", err)
	_, err = members.InsertOrReplace(ctx, &Member{ID: 2, Email: "ann@example.com"})
	wantUnique(t, "InsertOrReplace onto a taken email", err)
	_, err = db.Update(ctx, "members", driver.Filter(`{"id":2}`), driver.Update(`{"$set":{"email":"ann@example.com"}}`))
	wantUnique(t, "Update to a taken email", err)
	if _, err := members.InsertOrReplace(ctx, &Member{ID: 1, Email: "ann@example.com", Name: "Ann"}); err != nil {
		t.Errorf("InsertOrReplace of a member with its own email: %v", err)
	}
	m, err := members.ReadOne(ctx, filter.Eq("id", int64(2)))
	if err != nil || m.Email != "bob@example.com" {
		t.Errorf("member 2 after the refused writes: %+v, %v; want bob@example.com", m, err)
	}

	// Adding the key over duplicates is refused; removing it is allowed.
	plain := strings.Replace(membersSchema, `,"unique":true`, "", 1)
	if err := db.CreateOrUpdateCollection(ctx, "members", driver.Schema(plain)); err != nil {
		t.Fatalf("removing unique: %v", err)
	}
	if _, err := members.Insert(ctx, &Member{ID: 3, Email: "ann@example.com"}); err != nil {
		t.Fatalf("Insert of a duplicate once unique is removed: %v", err)
	}
	err = db.CreateOrUpdateCollection(ctx, "members", driver.Schema(membersSchema))
	wantCode(t, "adding unique over duplicates", err, code.InvalidArgument)
	if err != nil && !strings.Contains(err.Error(), `more than one document holds "ann@example.com"`) {
		t.Errorf("adding unique over duplicates: %v, want it to name the value", err)
	}
}

// wantUnique checks err is the client's AlreadyExists naming the email.
func wantUnique(t *testing.T, what string, err error) {
	t.Helper()
	wantCode(t, what, err, code.AlreadyExists)
	var de *driver.Error
	if errors.As(err, &de) && de.TigrisError != nil && !strings.Contains(de.Message, `duplicate value for unique field 'email': "ann@example.com"`) {
		t.Errorf("%s: message %q, want it to name the field and the value", what, de.Message)
	}
}
