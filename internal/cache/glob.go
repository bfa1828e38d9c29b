package cache

// Match reports whether key matches pattern as Redis's KEYS and SCAN
// match (its stringmatchlen, case-sensitive), byte by byte:
//
//   - any run of bytes, the empty one too
//     ?       any one byte
//     [abc]   one of the bytes listed; [a-z] a range (either way round);
//     [^...] any byte but those; \ quotes the byte after it; a
//     class left open runs to the end of the pattern
//     \x      the byte x itself
//
// Every element but * matches exactly one byte, so one backtracking
// point (the last *) is enough: the time is at most the product of the
// lengths, whatever the pattern, where Redis's recursion is exponential
// in the stars.
func Match(pattern, key string) bool {
	p, k := 0, 0
	star, starKey := -1, 0 // the pattern after the last *, and where its match began in key
	for k < len(key) {
		if p < len(pattern) && pattern[p] == '*' {
			for p < len(pattern) && pattern[p] == '*' {
				p++
			}
			star, starKey = p, k
			continue
		}
		if p < len(pattern) {
			if next, ok := matchOne(pattern, p, key[k]); ok {
				p, k = next, k+1
				continue
			}
		}
		if star < 0 {
			return false
		}
		// Let the last * take one more byte, and try again after it.
		starKey++
		p, k = star, starKey
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// matchOne matches the element of pattern at p (not a *) against c: it
// returns where the next element starts, and whether c matched.
func matchOne(pattern string, p int, c byte) (int, bool) {
	switch pattern[p] {
	case '?':
		return p + 1, true
	case '[':
		return matchClass(pattern, p+1, c)
	case '\\':
		if p+1 < len(pattern) {
			p++
		}
	}
	return p + 1, pattern[p] == c
}

// matchClass matches c against the class that starts at p, after its [.
func matchClass(pattern string, p int, c byte) (int, bool) {
	negate := p < len(pattern) && pattern[p] == '^'
	if negate {
		p++
	}
	matched := false
	for p < len(pattern) && pattern[p] != ']' {
		switch {
		case pattern[p] == '\\' && p+1 < len(pattern):
			p++
			matched = matched || pattern[p] == c
		case p+2 < len(pattern) && pattern[p+1] == '-':
			lo, hi := pattern[p], pattern[p+2]
			if lo > hi {
				lo, hi = hi, lo
			}
			matched = matched || (lo <= c && c <= hi)
			p += 2
		default:
			matched = matched || pattern[p] == c
		}
		p++
	}
	if p < len(pattern) {
		p++ // the ]
	}
	return p, matched != negate
}
