/* Unit tests for common/: number parsing, names, lists, CSV, key=value files,
 * atomic writes, reads at offsets. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/wz_csv.h"
#include "common/wz_io.h"
#include "common/wz_kv.h"
#include "common/wz_name.h"
#include "common/wz_str.h"
#include "tests/tap.h"

static void test_numbers(void)
{
	long v = 0;
	double d = 0;
	ok(wz_parse_count("10,000", &v) == 0 && v == 10000, "count with thousands separator");
	ok(wz_parse_count("100k", &v) == 0 && v == 100000, "count with k suffix");
	ok(wz_parse_count("1.5M", &v) == 0 && v == 1500000, "count with M suffix");
	ok(wz_parse_count("12x", &v) != 0, "count rejects trailing garbage");
	ok(wz_parse_count("", &v) != 0, "count rejects empty");
	ok(wz_parse_double(" 2.5 ", &d) == 0 && d == 2.5, "double with blanks");
	ok(wz_parse_double("nan", &d) != 0, "double rejects NaN");
	ok(wz_parse_double("1e999", &d) != 0, "double rejects overflow");
	/* One strict parser for every file: decimal only, all of it. */
	const char *not_decimal[] = { "0x10", "0x1p3", "inf", "-Infinity", "1e", ".", "-", "1.2.3",
				      "1e5x", "+-1", "1 2", "١٢" };
	for (size_t i = 0; i < sizeof not_decimal / sizeof not_decimal[0]; i++)
		ok(wz_parse_double(not_decimal[i], &d) != 0 && wz_parse_long(not_decimal[i], &v) != 0,
		   "'%s' is not a decimal number", not_decimal[i]);
	ok(wz_parse_double("-1.5e-3", &d) == 0 && d == -1.5e-3, "signed decimal with exponent");
	ok(wz_parse_double(".5", &d) == 0 && d == 0.5, "a leading point");
	ok(wz_parse_long("1e3", &v) != 0 && wz_parse_long("2.0", &v) != 0,
	   "a whole number has no point or exponent");
	ok(wz_parse_long("-42", &v) == 0 && v == -42, "negative whole number");
	const char *bad_counts[] = { "1,0,0", "10,00", "1,0000", ",100", "100,", "1_000,000", "0x10",
				     "1,,000" };
	for (size_t i = 0; i < sizeof bad_counts / sizeof bad_counts[0]; i++)
		ok(wz_parse_count(bad_counts[i], &v) != 0, "count refuses '%s'", bad_counts[i]);
	ok(wz_parse_count("1,000,000", &v) == 0 && v == 1000000, "count with two separators");
	ok(wz_parse_count("1_000", &v) == 0 && v == 1000, "count with underscores");
	char text[64];
	wz_format_thousands(17520000, 0, text, sizeof text);
	is_str(text, "17,520,000", "thousands separators");
	wz_format_thousands(-1234.5, 1, text, sizeof text);
	is_str(text, "-1,234.5", "negative with decimals");
}

static void test_names(void)
{
	ok(wz_name_eq("h100-sxm-80gb", "H100 SXM 80GB"), "names ignore case and separators");
	ok(!wz_name_eq("H100", "H100 SXM 80GB"), "a prefix is not equal");
	ok(wz_name_prefix("H100 SXM", "H100 SXM 80GB"), "prefix match");
	ok(!wz_name_prefix("H200", "H100 SXM 80GB"), "prefix mismatch");
	char **items;
	int n = wz_split_list(" a, b ,,c ", &items);
	ok(n == 3 && !strcmp(items[0], "a") && !strcmp(items[1], "b") && !strcmp(items[2], "c"),
	   "list split trims and drops empty items");
	wz_strlist_free(items, n);
	const char *why = NULL;
	ok(wz_name_valid("Kimi-VL-A3B (text model)", NULL) && wz_name_valid("GLM-5 (FP8)", NULL) &&
		   wz_name_valid("B200 (HGX)", NULL) && wz_name_valid("Modèle 3 – β", NULL),
	   "catalog names and UTF-8 are valid names");
	const char *bad[] = { "", " lead", "trail ", "a`b`", "a\"b", "a\\b", "a$b", "a|b", "a<b",
			      "a\nb", "a\tb", "a\x7f", "\xc3", "\xc0\x80", "\xed\xa0\x80", "\xc2\x85" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ok(!wz_name_valid(bad[i], &why) && why, "invalid name %zu (%s)", i, why ? why : "?");
	char longname[300];
	memset(longname, 'a', sizeof longname);
	longname[256] = '\0';
	ok(!wz_name_valid(longname, NULL), "a 256-byte name is too long");
	longname[255] = '\0';
	ok(wz_name_valid(longname, NULL), "255 bytes is allowed");
	wz_diag d;
	ok(wz_text_check("a,b\n1,2\n3\0,4\n", 13, "t.csv", &d) == WZ_ERR_INPUT &&
		   strstr(d.msg, "t.csv:3: a NUL byte"),
	   "a NUL byte is found and its line named");
	wz_csv *csv = NULL;
	ok(wz_csv_parse("a,b\n2\0000,20\n", 12, "n.csv", &csv, &d) == WZ_ERR_INPUT && !csv &&
		   strstr(d.msg, "n.csv:2"),
	   "CSV with a NUL inside a field is refused, not truncated");
}

static void test_csv(void)
{
	const char *text = "a,b\n1,\"x,y\"\n\n2,\"multi\nline\"\n3,z\n";
	wz_csv *csv;
	wz_diag diag;
	ok(wz_csv_parse(text, strlen(text), "t.csv", &csv, &diag) == WZ_OK, "csv parses");
	is_long(csv->nrows, 4, "blank line skipped");
	is_str(csv->rows[1].fields[1], "x,y", "quoted comma");
	is_long(csv->rows[2].line, 4, "record line number");
	is_long(csv->rows[3].line, 6, "line after a quoted newline");
	is_long(wz_csv_column(csv, "B"), 1, "header look-up ignores case");
	wz_csv_free(csv);
	const char *spanning = "h,i\r\n\"a\r\nb\",c\r\nd,e\r\n";
	ok(wz_csv_parse(spanning, strlen(spanning), "t.csv", &csv, &diag) == WZ_OK, "CRLF csv parses");
	is_long(csv->rows[1].line, 2, "a record whose first field spans lines starts where it starts");
	is_long(csv->rows[2].line, 4, "the next record's line");
	is_str(csv->rows[2].fields[0], "d", "CRLF does not leak into fields");
	wz_csv_free(csv);
}

static void test_kv(void)
{
	wz_kv *kv;
	wz_diag diag;
	ok(wz_kv_parse("# c\nusers = 10k\nname = x # y\n", "s", &kv, &diag) == WZ_OK, "kv parses");
	long users = 0;
	ok(wz_kv_get_long(kv, "users", 1, 0, &users, &diag) == WZ_OK && users == 10000, "kv long");
	is_str(wz_kv_get(kv, "name"), "x", "comment stripped");
	ok(wz_kv_get_long(kv, "missing", 1, 0, &users, &diag) == WZ_ERR_MISSING, "required key");
	wz_kv_free(kv);
	ok(wz_kv_parse("a = 1\na = 2\n", "s", &kv, &diag) == WZ_ERR_INPUT, "duplicate key refused");
	has_str(diag.msg, "s:2", "duplicate names the line");
	ok(wz_kv_parse("a = 1\nbogus line\n", "s", &kv, &diag) == WZ_ERR_INPUT, "line without =");
	has_str(diag.msg, "s:2", "error names the line");
	ok(wz_kv_parse("a = x\n", "s", &kv, &diag) == WZ_OK, "kv parses");
	double d;
	ok(wz_kv_get_double(kv, "a", 1, 0, &d, &diag) == WZ_ERR_INPUT, "not a number");
	has_str(diag.msg, "s:1: a:", "number error names line and key");
	wz_kv_free(kv);
}

static void test_atomic_write(void)
{
	char dir[] = "test_common_XXXXXX";
	ok(mkdtemp(dir) != NULL, "temporary folder");
	char *path = wz_path_join(dir, "out.txt");
	wz_diag diag;
	ok(wz_write_file_atomic(path, "first", 5, &diag) == WZ_OK, "atomic write");
	setenv("WZ_FAULT_WRITE", "2", 1);
	ok(wz_write_file_atomic(path, "second", 6, &diag) == WZ_ERR_IO, "injected disk-full fails");
	unsetenv("WZ_FAULT_WRITE");
	char *data;
	size_t n;
	ok(wz_read_file(path, 100, &data, &n, &diag) == WZ_OK && n == 5 && !memcmp(data, "first", 5),
	   "old content survives a failed write");
	free(data);
	char hex[17];
	uint64_t size;
	ok(wz_hash_file(path, hex, &size, &diag) == WZ_OK && size == 5 && strlen(hex) == 16,
	   "file hash");
	unlink(path);
	ok(rmdir(dir) == 0, "no temporary file left behind");
	free(path);
}

/* Reads at offsets: exactly the bytes asked for, across pieces; a file
 * that ends first is an I/O error saying it shrank; a missing file is bad
 * input, a folder not something to read at offsets. */
static void test_read_at(void)
{
	char dir[] = "test_common_XXXXXX";
	ok(mkdtemp(dir) != NULL, "temporary folder");
	char *path = wz_path_join(dir, "at.bin");
	size_t n = WZ_READ_PIECE + 1000;
	unsigned char *b = malloc(n), *got = malloc(n);
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(i * 7 + 3);
	wz_diag diag;
	int fd = -1;
	uint64_t size = 0;
	ok(!wz_write_file_atomic(path, b, n, &diag) && !wz_open_at(path, &fd, &size, &diag) && size == n,
	   "opened at its size (%llu)", (unsigned long long)size);
	ok(fd >= 0 && !wz_read_at(fd, path, 500, n - 600, got, &diag) && !memcmp(got, b + 500, n - 600),
	   "bytes 500 .. n - 100 read across a piece boundary, exactly");
	wz_err e = fd >= 0 ? wz_read_at(fd, path, n - 10, 20, got, &diag) : WZ_OK;
	ok(e == WZ_ERR_IO && strstr(diag.msg, "shrank"), "past the end: %s", e ? diag.msg : "(read)");
	if (fd >= 0)
		close(fd);
	e = wz_open_at(dir, &fd, &size, &diag);
	ok(e == WZ_ERR_UNSUPPORTED && fd < 0, "a folder is not read at offsets: %s", diag.msg);
	unlink(path);
	e = wz_open_at(path, &fd, &size, &diag);
	ok(e == WZ_ERR_INPUT && fd < 0, "a missing file is bad input: %s", diag.msg);
	ok(rmdir(dir) == 0, "folder removed");
	free(path);
	free(b);
	free(got);
}

/* Text from files escaped for a terminal and for Markdown: each of the
 * characters that would act (ESC, a C1 control, a line break, a link's
 * brackets, a tag) comes out inert, and plain names come out unchanged. */
static void test_escaping(void)
{
	wz_buf b = { 0 };
	wz_buf_terminal(&b, "A\x1b]0;owned\x07" "B\xc2\x9b" "2J\\ \xc3\xa9\n");
	is_str(wz_buf_str(&b), "A\\x1b]0;owned\\x07B\\u009b2J\\\\ \xc3\xa9\\x0a",
	       "terminal: ESC, BEL, CSI (C1), a backslash and a line break escaped; UTF-8 kept");
	wz_buf_reset(&b);
	wz_buf_terminal(&b, "DeepSeek-V3 (H100 SXM 80GB)");
	is_str(wz_buf_str(&b), "DeepSeek-V3 (H100 SXM 80GB)", "terminal: a plain name unchanged");
	wz_buf_reset(&b);
	wz_buf_markdown(&b, "x\n# Owned [click](javascript:alert(1)) <img src=x onerror=y> a|b `c` *d*");
	is_str(wz_buf_str(&b),
	       "x # Owned [click\\](javascript:alert(1)) &lt;img src=x onerror=y&gt; a\\|b "
	       "\\`c\\` *d*",
	       "markdown: no heading, link, tag, cell or code span survives");
	wz_buf_reset(&b);
	wz_buf_markdown(&b, "# Owned");
	is_str(wz_buf_str(&b), "\\# Owned", "markdown: a heading mark at the start escaped");
	wz_buf_reset(&b);
	wz_buf_markdown(&b, "- item");
	is_str(wz_buf_str(&b), "\\- item", "markdown: a list mark at the start escaped");
	wz_buf_reset(&b);
	wz_buf_markdown(&b, "DeepSeek-V3 on H100 SXM 80GB, 1.5x, mem_util, 0.12 [0.1, 0.2]");
	is_str(wz_buf_str(&b), "DeepSeek-V3 on H100 SXM 80GB, 1.5x, mem_util, 0.12 [0.1, 0.2]",
	       "markdown: a plain name unchanged");
	wz_buf_free(&b);
}

/* Only regular files are read: a FIFO no one writes to is refused at once
 * (it would block the open forever), and so is a folder. */
static void test_regular_only(void)
{
	char dir[] = "test_common_XXXXXX";
	ok(mkdtemp(dir) != NULL, "temporary folder");
	char *fifo = wz_path_join(dir, "fifo");
	ok(mkfifo(fifo, 0600) == 0, "a FIFO");
	char *data = NULL;
	size_t n;
	wz_diag diag;
	ok(wz_read_file(fifo, 100, &data, &n, &diag) == WZ_ERR_REFUSED && !data,
	   "wz_read_file refuses a FIFO: %s", diag.msg);
	char hex[17];
	uint64_t size;
	ok(wz_hash_file(fifo, hex, &size, &diag) == WZ_ERR_REFUSED, "wz_hash_file too: %s", diag.msg);
	void *buf = NULL;
	ok(wz_read_file_sized(fifo, 100, &buf, &n, &diag) == WZ_ERR_REFUSED && !buf,
	   "wz_read_file_sized too: %s", diag.msg);
	ok(wz_read_file(dir, 100, &data, &n, &diag) == WZ_ERR_REFUSED && strstr(diag.msg, "a folder"),
	   "a folder is refused: %s", diag.msg);
	unlink(fifo);
	free(fifo);
	ok(rmdir(dir) == 0, "folder removed");
}

int main(void)
{
	test_escaping();
	test_regular_only();
	test_numbers();
	test_names();
	test_csv();
	test_kv();
	test_atomic_write();
	test_read_at();
	return tap_done();
}
