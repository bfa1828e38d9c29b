package schema

// validUUID reports whether s is a UUID in its textual form: 36 characters,
// hyphens at 8, 13, 18 and 23, hexadecimal digits (either case) elsewhere.
// Like the original's "uuid" format it does not check version or variant.
func validUUID(s []byte) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHex(c) {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// validDateTime reports whether s is an RFC 3339 date-time
// (2006-01-02T15:04:05.999Z07:00), the original's "date-time" format: T and
// Z may be lower case, the fraction is optional and of any length, the date
// must exist, and a leap second (:60) is accepted only at 23:59 UTC.
func validDateTime(s []byte) bool {
	// full-date "T" partial-time time-offset
	if len(s) < len("2006-01-02T15:04:05Z") {
		return false
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	if !ok1 || !ok2 || !ok3 || s[4] != '-' || s[7] != '-' {
		return false
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) {
		return false
	}
	if s[10] != 'T' && s[10] != 't' {
		return false
	}
	hour, ok1 := digits(s[11:13])
	minute, ok2 := digits(s[14:16])
	second, ok3 := digits(s[17:19])
	if !ok1 || !ok2 || !ok3 || s[13] != ':' || s[16] != ':' {
		return false
	}
	if hour > 23 || minute > 59 || second > 60 {
		return false
	}
	rest := s[19:]
	if len(rest) > 0 && rest[0] == '.' {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 1 {
			return false
		}
		rest = rest[n:]
	}
	offset := 0 // minutes east of UTC
	switch {
	case len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z'):
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, ok1 := digits(rest[1:3])
		om, ok2 := digits(rest[4:6])
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return false
		}
		offset = oh*60 + om
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return false
	}
	if second == 60 {
		// A leap second is inserted at the end of a UTC day only.
		utc := ((hour*60+minute-offset)%(24*60) + 24*60) % (24 * 60)
		if utc != 23*60+59 {
			return false
		}
	}
	return true
}

func digits(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
