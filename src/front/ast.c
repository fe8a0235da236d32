/*
 * ast.c — small helpers over the syntax tree's enumerations.
 *
 * Element types and swizzle modes are spelled as keywords in the source;
 * these functions map between the spellings and the enums so the parser,
 * the printer, the diagnostics and the lowering all agree on one table
 * each (targets have their own table, base/target.c). Lookups take
 * (pointer, length) because the parser works on token text that is not
 * NUL-terminated.
 */
#include "ast.h"

#include <string.h>

typedef struct DTypeInfo {
	const char *name;
	int size;
	bool is_float;
} DTypeInfo;

static const DTypeInfo dtypes[DT__COUNT] = {
	[DT_NONE] = {"?", 0, false},
	[DT_BF16] = {"bf16", 2, true},
	[DT_F16] = {"f16", 2, true},
	[DT_F32] = {"f32", 4, true},
	[DT_F8E4M3] = {"f8e4m3", 1, true},
	[DT_I32] = {"i32", 4, false},
	[DT_U32] = {"u32", 4, false},
	[DT_I64] = {"i64", 8, false},
	[DT_BOOL] = {"bool", 1, false},
};

static bool same(const char *s, int n, const char *kw)
{
	return n >= 0 && strlen(kw) == (size_t)n && memcmp(s, kw, (size_t)n) == 0;
}

int dtype_size(DType t)
{
	return (t > DT_NONE && t < DT__COUNT) ? dtypes[t].size : 0;
}

const char *dtype_name(DType t)
{
	return (t > DT_NONE && t < DT__COUNT) ? dtypes[t].name : "?";
}

DType dtype_from(const char *s, int n)
{
	if (!s)
		return DT_NONE;
	for (int t = DT_NONE + 1; t < DT__COUNT; t++)
		if (same(s, n, dtypes[t].name))
			return (DType)t;
	return DT_NONE;
}

bool dtype_is_float(DType t)
{
	return t > DT_NONE && t < DT__COUNT && dtypes[t].is_float;
}

const char *swizzle_name(Swizzle s)
{
	switch (s) {
	case SWZ_NONE: return "none";
	case SWZ_32B: return "32B";
	case SWZ_64B: return "64B";
	case SWZ_128B: return "128B";
	}
	return "none";
}

int swizzle_bytes(Swizzle s)
{
	switch (s) {
	case SWZ_NONE: return 0;
	case SWZ_32B: return 32;
	case SWZ_64B: return 64;
	case SWZ_128B: return 128;
	}
	return 0;
}

const char *op_spelling(int op)
{
	switch (op) {
	case OP_EQ: return "==";
	case OP_NE: return "!=";
	case OP_LE: return "<=";
	case OP_GE: return ">=";
	case OP_AND: return "&&";
	case OP_OR: return "||";
	case OP_SHL: return "<<";
	case OP_SHR: return ">>";
	case '<': return "<";
	case '>': return ">";
	case '+': return "+";
	case '-': return "-";
	case '*': return "*";
	case '/': return "/";
	case '%': return "%";
	case '@': return "@";
	case '!': return "!";
	default: return "?";
	}
}
