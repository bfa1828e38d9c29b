package schemagen

import (
	"fmt"
	"strings"

	"github.com/foliodb/folio/internal/schema"
)

// generateJavaFinal writes a class per type as the final server did: the
// 2022 shapes, with the collection's annotation fully qualified (and left
// out when the class is named as the collection), constructor and setter
// parameters named in camelCase after the Go field names (arrayValues),
// and "};" closing the constructors. Its equals compared strings, dates,
// UUIDs and byte arrays with ==, and its hashCode hashed arrays by
// identity: compiled, but wrong (two equal documents read twice were not
// equal), so those are compared and hashed by value here, as in 2022.
func generateJavaFinal(s *schema.Schema) string {
	var b strings.Builder
	for _, t := range buildModel(s, Final, func(n string) bool { return javaReserved[n] }).Types {
		writeJavaFinalClass(&b, t)
	}
	return b.String()
}

func writeJavaFinalClass(b *strings.Builder, t *typeDecl) {
	fields := javaFields(t, Final)
	b.WriteString("\n")
	writeJavaComment(b, "", t.Name, t.Description)
	if t.Collection != "" {
		if t.Collection != t.Name {
			fmt.Fprintf(b, "@com.tigrisdata.db.annotation.TigrisCollection(value = %s)\n", javaString(t.Collection))
		}
		b.WriteString("public class " + t.Name + " implements TigrisCollectionType {\n")
	} else {
		b.WriteString("class " + t.Name + " {\n")
	}
	writeJavaMembers(b, fields)
	fmt.Fprintf(b, "\n    public %s() {};\n", t.Name)
	if len(fields) > 0 { // else it would be the empty one twice
		fmt.Fprintf(b, "\n    public %s(", t.Name)
		for i, f := range fields {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(b, "\n        %s %s", f.typ, f.param)
		}
		b.WriteString("\n    ) {")
		for _, f := range fields {
			fmt.Fprintf(b, "\n        this.%s = %s;", f.ident, f.param)
		}
		b.WriteString("\n    };\n")
	}
	writeJavaFinalEquals(b, t.Name, fields)
	b.WriteString("}\n")
}

func writeJavaFinalEquals(b *strings.Builder, class string, fields []javaField) {
	b.WriteString("\n    @Override\n    public boolean equals(Object o) {\n")
	b.WriteString("        if (this == o) {\n            return true;\n        }\n")
	b.WriteString("        if (o == null || getClass() != o.getClass()) {\n            return false;\n        }\n")
	if len(fields) == 0 {
		b.WriteString("        return true;\n    }\n")
	} else {
		fmt.Fprintf(b, "\n        %s other = (%s) o;\n        return", class, class)
		for i, f := range fields {
			if i > 0 {
				b.WriteString(" &&")
			}
			// The parameter o and the local other hide fields of those
			// names.
			a, o := f.ident, "other."+f.ident
			if a == "o" || a == "other" {
				a = "this." + a
			}
			b.WriteString("\n            ")
			switch dims := javaDims(f.fieldDecl); {
			case dims > 1:
				fmt.Fprintf(b, "Arrays.deepEquals(%s, %s)", a, o)
			case dims == 1:
				fmt.Fprintf(b, "Arrays.equals(%s, %s)", a, o)
			case javaPrimitive(f.typ):
				fmt.Fprintf(b, "%s == %s", a, o)
			default:
				fmt.Fprintf(b, "Objects.equals(%s, %s)", a, o)
			}
		}
		b.WriteString(";\n    }\n")
	}

	b.WriteString("\n    @Override\n    public int hashCode() {\n        return Objects.hash(")
	for i, f := range fields {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n            ")
		switch dims := javaDims(f.fieldDecl); {
		case dims > 1:
			fmt.Fprintf(b, "Arrays.deepHashCode(%s)", f.ident)
		case dims == 1:
			fmt.Fprintf(b, "Arrays.hashCode(%s)", f.ident)
		default:
			b.WriteString(f.ident)
		}
	}
	b.WriteString("\n        );\n    }\n")
}
