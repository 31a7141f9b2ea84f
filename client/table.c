/*
 * table.c: text tables for gpuq status and show. Columns are as wide
 * as their widest cell; the last column may be cut to the terminal's
 * width, or, in a table that asks for it (cli_table_set_below), leave
 * the table and go whole on lines of its own under each row. Cells
 * come from the daemon and from users (job names), so they are cleaned
 * of control characters before they reach a terminal.
 * Knows nothing of jobs.
 */
#include "config.h"

#include <sys/ioctl.h>

#include <langinfo.h>
#include <locale.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "client/cli.h"
#include "common/log.h"
#include "common/xmalloc.h"

#define TABLE_GAP	2	/* spaces between columns */
#define TABLE_MIN_LAST	8	/* never cut the last column below this */
#define TABLE_BELOW	4	/* indent of a last cell moved under its row */

/*
 * Cells live in one text arena, NUL-terminated, with their display width
 * found as they are cleaned: gpuq status --all is a million cells, and
 * a malloc and two width scans per cell were a third of its time. A
 * cell equal to the one above it is not copied again.
 */
struct table_cell {
	size_t		 off;		/* in text */
	uint32_t	 len;
	uint32_t	 width;		/* display columns */
};

struct cli_table {
	const struct cli_col	*cols;	/* borrowed; static tables */
	int			 ncols;
	struct table_cell	*cells;	/* row-major */
	size_t			 ncells;
	size_t			 cap;
	char			*text;	/* cleaned copies */
	size_t			 textlen;
	size_t			 textcap;
	size_t			 indent;	/* spaces before each line */
	int			 below;		/* last column may go under */
};

struct cli_table *
cli_table_new(const struct cli_col *cols, int ncols)
{
	struct cli_table	*t;

	t = xcalloc(1, sizeof *t);
	t->cols = cols;
	t->ncols = ncols;
	return t;
}

void
cli_table_free(struct cli_table *t)
{
	if (t == NULL)
		return;
	free(t->cells);
	free(t->text);
	free(t);
}

void
cli_table_drop(struct cli_table *t, const struct cli_col *cols, int col)
{
	size_t	r, rows, n = (size_t)t->ncols, c = (size_t)col, k = 0;

	if (col < 0 || col >= t->ncols)
		return;
	/*
	 * The dropped cells' text stays in the arena, unreferenced. Row by
	 * row, without a division per cell: gpuq status --all drops SLACK
	 * from a million cells after its last page, when nothing overlaps.
	 */
	rows = t->ncells / n;
	for (r = 0; r < rows; r++) {
		memmove(&t->cells[k], &t->cells[r * n], c * sizeof *t->cells);
		k += c;
		memmove(&t->cells[k], &t->cells[r * n + c + 1],
		    (n - c - 1) * sizeof *t->cells);
		k += n - c - 1;
	}
	t->ncells = k;
	t->ncols--;
	t->cols = cols;
}

/* Decode one UTF-8 sequence at S (LEN > 0); *cp = -1 if malformed. */
static size_t
table_utf8(const unsigned char *s, size_t len, long *cp)
{
	size_t	need, k;
	long	c, min;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		need = 1; c = s[0] & 0x1f; min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		need = 2; c = s[0] & 0x0f; min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		need = 3; c = s[0] & 0x07; min = 0x10000;
	} else {
		*cp = -1;
		return 1;
	}
	for (k = 1; k <= need; k++) {
		if (k >= len || (s[k] & 0xc0) != 0x80) {
			*cp = -1;
			return 1;
		}
		c = (c << 6) | (s[k] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		c = -1;
	*cp = c;
	return c == -1 ? 1 : need + 1;
}

/*
 * The user's LC_CTYPE, for wcwidth() and the ellipsis; loaded on first
 * use, since commands that print no table need not pay for it.
 */
static void
table_locale(void)
{
	static int	done;

	if (!done) {
		(void)setlocale(LC_CTYPE, "");
		done = 1;
	}
}

/* Columns one code point takes; 1 when the locale cannot tell. */
static int
table_cpwidth(long cp)
{
	int	w;

	if (cp < 0x80)
		return 1;
	table_locale();
	w = wcwidth((wchar_t)cp);
	return w < 0 ? 1 : w;
}

size_t
cli_table_strwidth(const char *s, size_t len)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, w = 0;
	long			 cp;

	while (i < len) {
		i += table_utf8(p + i, len - i, &cp);
		w += (size_t)table_cpwidth(cp);
	}
	return w;
}

char *
cli_table_clean(const char *s)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 len = strlen(s), i = 0, n, o = 0;
	char			*out;
	long			 cp;

	out = xmalloc(len + 1);
	while (i < len) {
		n = table_utf8(p + i, len - i, &cp);
		if (cp < 0 || cp < 0x20 || cp == 0x7f ||
		    (cp >= 0x80 && cp < 0xa0))
			out[o++] = '?';
		else {
			memcpy(out + o, s + i, n);
			o += n;
		}
		i += n;
	}
	out[o] = '\0';
	return out;
}

/* Cell I's text. */
static const char *
table_text(const struct cli_table *t, size_t i)
{
	return t->text + t->cells[i].off;
}

/*
 * Append S (LEN bytes) cleaned as cli_table_clean() cleans it to the
 * arena as cell C, with its width. Cleaning never makes text longer.
 */
static void
table_store(struct cli_table *t, struct table_cell *c, const char *s,
    size_t len)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, n, o, w = 0;
	char			*out;
	long			 cp;

	if (t->textcap - t->textlen < len + 1) {
		t->textcap = t->textcap ? t->textcap * 2 : 65536;
		while (t->textcap - t->textlen < len + 1)
			t->textcap *= 2;
		t->text = xrealloc(t->text, t->textcap);
	}
	out = t->text + t->textlen;
	o = 0;
	while (i < len) {
		if (p[i] >= 0x20 && p[i] < 0x7f) {
			out[o++] = (char)p[i++];
			w++;
			continue;
		}
		n = table_utf8(p + i, len - i, &cp);
		if (cp < 0 || cp < 0x20 || cp == 0x7f ||
		    (cp >= 0x80 && cp < 0xa0)) {
			out[o++] = '?';
			w++;
		} else {
			memcpy(out + o, s + i, n);
			o += n;
			w += (size_t)table_cpwidth(cp);
		}
		i += n;
	}
	out[o] = '\0';
	if (o > UINT32_MAX / 2)
		fatalx("table: a cell of %zu bytes", o);
	c->off = t->textlen;
	c->len = o;
	c->width = w;
	t->textlen += o + 1;
}

/* Add cell S of LEN bytes. */
static void
table_addn(struct cli_table *t, const char *s, size_t len)
{
	struct table_cell	*c, *above;

	if (t->ncells == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->cells = xreallocarray(t->cells, t->cap, sizeof *t->cells);
	}
	c = &t->cells[t->ncells];
	/* The same as the cell above (a state, "-", a GPU): shared. */
	if (t->ncells >= (size_t)t->ncols) {
		above = c - t->ncols;
		if (above->len == len && memcmp(table_text(t, t->ncells -
		    (size_t)t->ncols), s, len) == 0 && memchr(s, '\0',
		    len) == NULL) {
			*c = *above;
			t->ncells++;
			return;
		}
	}
	table_store(t, c, s, len);
	t->ncells++;
}

void
cli_table_add(struct cli_table *t, const char *s)
{
	if (s == NULL)
		s = "-";
	table_addn(t, s, strlen(s));
}

void
cli_table_addf(struct cli_table *t, const char *fmt, ...)
{
	va_list	 ap;
	char	 buf[512], *s;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof buf) {
		table_addn(t, buf, strlen(buf));
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	cli_table_add(t, s != NULL ? s : "?");
	free(s);
}

void
cli_table_set_indent(struct cli_table *t, int n)
{
	t->indent = n > 0 ? (size_t)n : 0;
}

void
cli_table_set_below(struct cli_table *t, int on)
{
	t->below = on;
}

size_t
cli_table_rows(const struct cli_table *t)
{
	return t->ncells / (size_t)t->ncols;
}

/* The ellipsis for cut cells: "…" where the terminal speaks UTF-8. */
static const char *
table_ellipsis(size_t *ret_width)
{
	const char	*cs;

	table_locale();
	cs = nl_langinfo(CODESET);
	*ret_width = cs != NULL && strcmp(cs, "UTF-8") == 0 ? 1 : 3;
	return *ret_width == 1 ? "\xe2\x80\xa6" : "...";
}

/*
 * The output, lines built whole so trailing blanks can be dropped, and
 * written a TABLE_FLUSH at a time rather than a line at a time.
 */
#define TABLE_FLUSH	(64 * 1024)

struct table_line {
	char	*buf;
	size_t	 len;
	size_t	 cap;
};

/*
 * The line's buffer keeps TABLE_SLACK bytes past what is asked for, so
 * blanks go in eight at a time: padding is two calls per cell, and a
 * memset per call was a third of the time gpuq status --all took after
 * its last page.
 */
#define TABLE_SLACK	8

static void
table_grow(struct table_line *l, size_t n)
{
	l->cap = (l->len + n + TABLE_SLACK) * 2;
	l->buf = xrealloc(l->buf, l->cap);
}

static inline void
table_room(struct table_line *l, size_t n)
{
	if (l->cap - l->len < n + TABLE_SLACK)
		table_grow(l, n);
}

static inline void
table_put(struct table_line *l, const char *s, size_t n)
{
	table_room(l, n);
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

static inline void
table_pad(struct table_line *l, size_t n)
{
	char	*p;
	size_t	 i;

	table_room(l, n);
	p = l->buf + l->len;
	for (i = 0; i < n; i += 8)
		memcpy(p + i, "        ", 8);	/* within the slack */
	l->len += n;
}

/* Append the first bytes of S that fit in MAX columns, with an ellipsis. */
static void
table_cut(struct table_line *l, const char *s, size_t max)
{
	const unsigned char	*p = (const unsigned char *)s;
	const char		*ell;
	size_t			 len = strlen(s), i = 0, w = 0, n, ew;
	long			 cp;
	int			 cw;

	if (cli_table_strwidth(s, len) <= max) {
		table_put(l, s, len);
		return;
	}
	ell = table_ellipsis(&ew);
	if (max <= ew) {
		table_put(l, ell, strlen(ell));
		return;
	}
	while (i < len) {
		n = table_utf8(p + i, len - i, &cp);
		cw = table_cpwidth(cp);
		if (w + (size_t)cw > max - ew)
			break;
		w += (size_t)cw;
		i += n;
	}
	table_put(l, s, i);
	table_put(l, ell, strlen(ell));
}

/*
 * Append S on lines of their own, each starting with IND spaces, broken
 * between words to fit WIDTH columns. A word longer than a line is not
 * cut: it goes whole on a line of its own.
 */
static void
table_wrap(struct table_line *l, const char *s, size_t ind, size_t width)
{
	const char	*p = s, *e;
	size_t		 col = 0, ww;

	while (*p != '\0') {
		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		e = strchr(p, ' ');
		if (e == NULL)
			e = p + strlen(p);
		ww = cli_table_strwidth(p, (size_t)(e - p));
		if (col > ind && col + 1 + ww > width) {
			table_put(l, "\n", 1);
			col = 0;
		}
		if (col == 0) {
			table_pad(l, ind);
			col = ind;
		} else {
			table_put(l, " ", 1);
			col++;
		}
		table_put(l, p, (size_t)(e - p));
		col += ww;
		p = e;
	}
	if (col > 0)
		table_put(l, "\n", 1);
}

void
cli_table_print(struct cli_table *t, FILE *f, int width, int header)
{
	struct table_line	 l = { NULL, 0, 0 };
	const struct table_cell	*cell;
	size_t			*w, rows, r, used = 0, cw, last, start, slen;
	const char		*s;
	int			 c, ncols = t->ncols;

	rows = cli_table_rows(t);
	w = xcalloc((size_t)t->ncols, sizeof *w);
	for (c = 0; c < t->ncols; c++)
		if (header)
			w[c] = strlen(t->cols[c].header);
	for (r = 0; r < rows; r++) {
		cell = &t->cells[r * (size_t)t->ncols];
		for (c = 0; c < t->ncols; c++)
			if (cell[c].width > w[c])
				w[c] = cell[c].width;
	}
	used = t->indent;
	for (c = 0; c < t->ncols - 1; c++)
		used += w[c] + TABLE_GAP;
	last = w[t->ncols - 1];
	if (width > 0 && used + last > (size_t)width) {
		if (t->below && t->ncols > 1)
			ncols--;	/* the last column goes under */
		else
			last = (size_t)width > used + TABLE_MIN_LAST ?
			    (size_t)width - used : TABLE_MIN_LAST;
	}
	for (r = 0; r < rows + (header ? 1 : 0); r++) {
		start = l.len;
		table_pad(&l, t->indent);
		for (c = 0; c < ncols; c++) {
			if (header && r == 0) {
				s = t->cols[c].header;
				slen = strlen(s);
				cw = cli_table_strwidth(s, slen);
			} else {
				cell = &t->cells[(r - (header ? 1 : 0)) *
				    (size_t)t->ncols + (size_t)c];
				s = t->text + cell->off;
				slen = cell->len;
				cw = cell->width;
			}
			if (c == ncols - 1 && ncols < t->ncols) {
				if (t->cols[c].align == CLI_RIGHT)
					table_pad(&l, w[c] - cw);
				table_put(&l, s, slen);
				break;
			}
			if (c == t->ncols - 1) {
				if (t->cols[c].align == CLI_RIGHT &&
				    cw < last)
					table_pad(&l, last - cw);
				if (cw <= last)
					table_put(&l, s, slen);
				else
					table_cut(&l, s, last);
				break;
			}
			if (t->cols[c].align == CLI_RIGHT)
				table_pad(&l, w[c] - cw);
			table_put(&l, s, slen);
			if (t->cols[c].align == CLI_LEFT)
				table_pad(&l, w[c] - cw);
			table_pad(&l, TABLE_GAP);
		}
		while (l.len > start && l.buf[l.len - 1] == ' ')
			l.len--;
		table_put(&l, "\n", 1);
		if (ncols < t->ncols && !(header && r == 0)) {
			s = table_text(t, (r - (header ? 1 : 0)) *
			    (size_t)t->ncols + (size_t)ncols);
			table_wrap(&l, s, t->indent + TABLE_BELOW,
			    (size_t)width);
		}
		if (l.len >= TABLE_FLUSH) {
			fwrite(l.buf, 1, l.len, f);
			l.len = 0;
		}
	}
	if (l.len > 0)
		fwrite(l.buf, 1, l.len, f);
	free(l.buf);
	free(w);
}

int
cli_table_width(void)
{
	struct winsize	 ws;
	const char	*env = getenv("COLUMNS");
	char		*end;
	long		 n;

	/* As ls(1) does: COLUMNS wins, terminal or not. */
	if (env != NULL && *env != '\0') {
		n = strtol(env, &end, 10);
		if (*end == '\0' && n > 0 && n <= 100000)
			return (int)n;
	}
	if (!isatty(STDOUT_FILENO))
		return 0;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}
