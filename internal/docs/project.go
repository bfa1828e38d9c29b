package docs

// Project returns doc with only the top-level members named in include (in
// the document's own order), or without those in exclude; with both empty
// it returns doc itself. Messages are projected by the same rule as
// documents, so the messages package uses it too.
func Project(doc []byte, include, exclude map[string]bool) ([]byte, error) {
	return project(doc, include, exclude)
}
