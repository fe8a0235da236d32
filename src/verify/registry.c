/*
 * registry.c — the rule registry, the verifier version and the dispatcher.
 *
 * Every finding Cake can emit has exactly one row in the table below: a
 * stable ID, a category, an authority (the severity the rule reports at),
 * a version, a short title and a one-paragraph rationale that says what the
 * rule models and in which domain it is trustworthy. The front end's IDs
 * (CK-LEX-*, CK-SYN-*, CK-SEM-*) live here too, under "language", so that
 * `cake rules`, docs/RULES.md and SARIF's rule table describe every ID a
 * user can ever see. A unit test (tests/unit/test_rules_doc.c) scans src/
 * for rule IDs and fails when one is missing from this table, and fails
 * when docs/RULES.md is not byte-identical to rules_print("markdown").
 *
 * The table is sorted by ID (rules_all promises ID order; rule_find does a
 * binary search; the unit test checks the order).
 *
 * Verifier version. A 32-bit FNV-1a hash over "ID:version\n" of every
 * enabled rule, printed as "v1-xxxxxxxx". Bumping one rule's version, or
 * adding/removing a rule, changes it. verifier_version_str writes it into a
 * caller buffer; verifier_version returns a pointer to a function-local
 * static buffer filled exactly once through pthread_once — the single
 * piece of static mutable state in the verifier, written once with the same
 * deterministic bytes whoever calls first, so it behaves as a constant.
 *
 * verify_kernel builds the shared model (verify_int.h: roles, resources,
 * statements in program order, domain samples) once and hands it to each
 * rule family in a fixed order. Families never stop at the first finding.
 */
#include "verify_int.h"

#include <pthread.h>
#include <string.h>

#define R(id, cat, sev, ver, title, why) { id, cat, sev, ver, title, why }

static const Rule rule_table[] = {
R("CK-BAR-001", CAT_SAFETY, SEV_ERROR, 1, "declared arrivals differ from derived arrivals",
  "Models the mbarrier arrival count of one phase. The derived count is the sum, over every role "
  "that arrives on or signals the barrier, of one arrival per warpgroup of the role (one for a "
  "role of fewer than 4 warps) for each `arrive` statement executed per iteration, plus one "
  "arrival per role whose TMA loads signal it (the expect_tx arrive). If the declared `arrivals` "
  "is larger the phase never completes (hang); if smaller it completes early and consumers read "
  "stale data. Domain: arrive/tma statements at any loop depth, if/else branches counted by "
  "their larger side."),
R("CK-BAR-002", CAT_SAFETY, SEV_ERROR, 1, "transaction bytes not delivered every phase",
  "Models the expect_tx byte count of a barrier signalled by TMA loads. The compiler derives "
  "the per-phase byte total from the TMA statements that signal it (reported in the finding); "
  "when one of them is conditional (inside an `if` the others are not under) the bytes expected "
  "are not delivered in every phase and the waiting role hangs, or the barrier completes before "
  "the data lands. Domain: TMA loads signalling a barrier in the same role and loop body."),
R("CK-BAR-003", CAT_SAFETY, SEV_ERROR, 1, "wait without a producer",
  "Every `wait B` needs some other role that arrives on B or issues a TMA load signalling B on "
  "its path; otherwise the phase can never complete. Models the static producer set of each "
  "barrier over all role programs (both branches of every if)."),
R("CK-BAR-004", CAT_SAFETY, SEV_ERROR, 1, "role waits on a barrier only it arrives on",
  "A role that waits on a barrier whose only arrivals come from the same role, in the same "
  "phase, waits on itself: the arrive comes after the wait in program order or is redundant. "
  "Models same-role arrive/wait pairs on one barrier with no other producer."),
R("CK-BAR-005", CAT_SAFETY, SEV_ERROR, 1, "ring barrier used by more than one pipeline",
  "A ring barrier's stage and phase are derived from the pipelined loop it is used in; using "
  "it in loops pipelined on two different pipelines (or on a pipeline other than its declared "
  "ring) makes the derived stage index disagree between roles. Models the pipeline of every "
  "wait/arrive/signal on ring barriers."),
R("CK-BAR-006", CAT_SAFETY, SEV_ERROR, 1, "producer and consumer trip counts differ",
  "The roles that hand off through a pipeline must run the same number of pipelined "
  "iterations; otherwise one side waits for a stage the other never fills or releases. "
  "Compares the trip counts of loops pipelined on the same pipeline across roles, "
  "symbolically when the bounds are structurally equal and at sampled domain points "
  "otherwise. Domain: loop bounds built from constants, dims and enclosing loop variables."),
R("CK-BAR-007", CAT_SAFETY, SEV_ERROR, 1, "ring barrier used outside its pipelined loop",
  "A ring barrier means `the current stage' only inside a loop pipelined on its ring; "
  "waiting, arriving or signalling it elsewhere leaves the stage and phase undefined. Models "
  "the innermost enclosing pipelined loop of each barrier use."),
R("CK-BAR-008", CAT_SAFETY, SEV_ERROR, 1, "barrier use disagrees with declared producers/consumers",
  "The declaration's `producers` and `consumers` lists are what the compiler uses to size and "
  "initialise the barrier and what readers trust; a role that arrives on (or TMA-signals) a "
  "barrier without being a declared producer, or waits without being a declared consumer, "
  "breaks that contract. Models every wait/arrive/signal against the declaration."),
R("CK-DATA-001", CAT_DATA, SEV_ERROR, 1, "swizzle does not match the wgmma operand row",
  "Traces a shared buffer from the TMA that fills it to the wgmma that reads it. With a K-major "
  "operand the descriptor's swizzle mode must span exactly one row of the tile's K extent "
  "(64 bf16 = 128 B needs 128B swizzle, 32 bf16 = 64 B needs 64B); a mismatch makes the tensor "
  "core read permuted data. Reported at the wgmma with the TMA (producer end) as related span. "
  "Domain: sm_90a wgmma operands in shared memory with constant shapes."),
R("CK-DATA-002", CAT_DATA, SEV_ERROR, 1, "TMA dtype mismatch",
  "TMA copies bytes and never converts: the global tensor and the shared buffer at the two ends "
  "of a TMA load or store must have the same element type. Reported at the TMA statement with "
  "the other end's declaration as related span."),
R("CK-DATA-003", CAT_DATA, SEV_ERROR, 1, "TMA box shape differs from the buffer",
  "The TMA box (the slice lengths of the global reference, leading unit dimensions dropped) must "
  "equal the shape of one stage of the destination/source shared buffer; otherwise part of the "
  "buffer is never written (consumers read stale data) or the copy overruns it. Domain: box "
  "extents that fold to constants."),
R("CK-DATA-004", CAT_DATA, SEV_ERROR, 1, "stored region shape differs from the fragment",
  "A `store`/`atomic_add` of a fragment expression into a tile must cover exactly the "
  "fragment's shape; a smaller region drops results and a larger one writes garbage. Traces "
  "the fragment (through dtype casts and element-wise math) to its declaration."),
R("CK-DATA-005", CAT_DATA, SEV_ERROR, 1, "ring buffer used outside its pipeline",
  "A ring buffer names `the current stage' only inside a loop pipelined on its ring. Reading or "
  "writing it outside such a loop, or inside a loop pipelined on another pipeline, uses a "
  "stage index unrelated to the one the producer filled."),
R("CK-DATA-006", CAT_DATA, SEV_ERROR, 1, "matmul operand shapes disagree",
  "For `acc (+)= a @ b` the operand shapes (after ^T) must be [M,K] @ [K,N] with the "
  "accumulator [M,N]. Reported at the matmul with the accumulator declaration as related span."),
R("CK-DEAD-001", CAT_SAFETY, SEV_ERROR, 1, "deadlock: wait cycle between roles",
  "Model-checks the role programs over mbarrier phase state. Each role is a program counter over "
  "its flattened trace (loops unrolled at concrete trip counts: the smallest domain point, the "
  "next one, and one giving stages+2 pipelined iterations); an arrive adds arrivals, a phase "
  "completes when the declared count is reached (TMA bytes are delivered at once); a wait blocks "
  "until the needed phase has completed (the data producer's first pass over an empty ring is "
  "free). Barrier state only grows, so the greedy run is exact for this model. When no role can "
  "move, the blocked roles form a wait cycle reported as a story naming role, barrier, stage, "
  "phase and iteration at each step."),
R("CK-DEAD-002", CAT_SAFETY, SEV_NOTE, 1, "deadlock check incomplete",
  "The deadlock model checker never passes silently: when a trip count or branch condition "
  "cannot be evaluated at the sampled domain points, or the simulation exceeds its step cap, it "
  "says what was not checked."),
R("CK-DEAD-003", CAT_SAFETY, SEV_ERROR, 1, "deadlock: wait for a phase that never completes",
  "Same model as CK-DEAD-001, for the case without a cycle: a role waits for a barrier phase "
  "whose producers have all finished (or never arrive often enough), so it blocks forever. The "
  "story names the missing arrivals."),
R("CK-DEAD-004", CAT_SAFETY, SEV_ERROR, 1, "barrier phase aliasing",
  "mbarrier waits test a phase parity bit. If a producer can complete a barrier's phase two or "
  "more times ahead of a waiting role, the waiter sees the same parity and either passes too "
  "early or blocks forever. Detected in the same simulation when a role reaches a wait and the "
  "barrier has completed at least two phases more than it needs."),
R("CK-HW-001", CAT_CONTRACT, SEV_ERROR, 1, "wgmma M per warpgroup",
  "wgmma computes 64 accumulator rows per warpgroup per instruction. The accumulator rows each "
  "warpgroup of the issuing role owns (rows / warpgroups with `split m`, all rows otherwise) "
  "must be a multiple of 64. Domain: sm_90a."),
R("CK-HW-002", CAT_CONTRACT, SEV_ERROR, 1, "wgmma N range",
  "The N extent of one wgmma (accumulator columns per warpgroup) must be a multiple of 8 "
  "between 8 and 256. Domain: sm_90a dense wgmma."),
R("CK-HW-003", CAT_CONTRACT, SEV_ERROR, 1, "wgmma K granularity",
  "One wgmma instruction consumes K = 16 for bf16/f16 and K = 32 for f8 operands; the shared "
  "tile's K extent must be a multiple of that. Domain: sm_90a."),
R("CK-HW-004", CAT_CONTRACT, SEV_ERROR, 1, "wgmma/mma dtype combination",
  "Supported combinations: bf16 x bf16 -> f32, f16 x f16 -> f32 or f16, f8e4m3 x f8e4m3 -> f32 "
  "(wgmma only). Both operands must share one dtype."),
R("CK-HW-005", CAT_CONTRACT, SEV_ERROR, 1, "wgmma operand location",
  "wgmma reads B from shared memory (through a descriptor) and A from shared memory or from a "
  "register fragment of the issuing role; the accumulator is a register fragment of that role."),
R("CK-HW-006", CAT_CONTRACT, SEV_ERROR, 1, "wgmma operand major-ness",
  "A shared operand used as stored ([M,K] for A, b^T of an [N,K] buffer for B) is K-major. The "
  "other orientation is MN-major, which wgmma supports only for 16-bit types; f8 operands must "
  "be K-major."),
R("CK-HW-007", CAT_CONTRACT, SEV_ERROR, 1, "TMA box extent",
  "Every TMA box dimension must be between 1 and 256 elements (cuTensorMapEncodeTiled boxDim)."),
R("CK-HW-008", CAT_CONTRACT, SEV_ERROR, 1, "TMA inner box bytes",
  "The innermost box extent in bytes must be a multiple of 16 and, for a swizzled shared "
  "buffer, no larger than the swizzle span (128B swizzle: at most 128 bytes)."),
R("CK-HW-009", CAT_CONTRACT, SEV_ERROR, 1, "global stride alignment",
  "TMA requires every global stride to be a multiple of 16 bytes: the innermost extent times "
  "the element size must be a multiple of 16 under the domain constraints. Reported when a "
  "constant extent or the domain's modulus constraints prove it false."),
R("CK-HW-010", CAT_CONTRACT, SEV_ERROR, 1, "cp.async transfer size",
  "cp.async copies 4, 8 or 16 bytes per thread; the innermost contiguous extent of the copy in "
  "bytes must be a multiple of 4. Domain: sm_80 and later."),
R("CK-HW-011", CAT_CONTRACT, SEV_ERROR, 1, "instruction not available on the target",
  "wgmma, TMA, setmaxnreg (per-role regs), clusters and fence.proxy.async need sm_90a; wgmma "
  "does not exist on sm_100a (tcgen05 replaces it). mma.sync and cp.async are accepted on every "
  "target. The finding names the target."),
R("CK-HW-012", CAT_CONTRACT, SEV_ERROR, 1, "cluster size",
  "A thread-block cluster may hold at most 8 blocks (portable limit), each extent at least 1."),
R("CK-HW-013", CAT_CONTRACT, SEV_ERROR, 1, "mma.sync tile granularity",
  "mma.sync m16n8k16 (bf16/f16) tiles: accumulator rows a multiple of 16, columns a multiple of "
  "8, K a multiple of 16."),
R("CK-HW-014", CAT_CONTRACT, SEV_NOTE, 1, "global stride alignment not provable",
  "The domain does not constrain a symbolic innermost extent enough to prove the 16-byte TMA "
  "stride alignment (CK-HW-009); the runtime check in the launcher will decide. Add a modulus "
  "constraint to the domain."),
R("CK-RACE-001", CAT_SAFETY, SEV_ERROR, 1, "read of a stage before waiting on its full barrier",
  "Read-after-write: inside a pipelined loop, a role that reads a ring buffer (wgmma operand, "
  "load, expression) must first wait, in the same iteration, on a barrier that the buffer's "
  "writer signals after writing (its TMA `signal` barrier or a barrier it arrives on after the "
  "store). Domain: program order within one iteration of the pipelined loop."),
R("CK-RACE-002", CAT_SAFETY, SEV_ERROR, 1, "stage overwritten without waiting on its empty barrier",
  "Write-after-read: a role that writes a shared buffer inside a loop (TMA load, cp.async, "
  "store) while another role reads it must first wait, in the same iteration, on a barrier that "
  "a reader arrives on. Otherwise the writer overwrites a stage the consumer still reads."),
R("CK-RACE-003", CAT_SAFETY, SEV_ERROR, 1, "stage released while a wgmma still reads it",
  "wgmma is asynchronous: its shared operands are read until the group retires. `wgmma_wait N` "
  "leaves at most N groups in flight (each wgmma statement is one group). Arriving on a barrier "
  "that lets a producer overwrite the stage while a wgmma reading that stage is still in flight "
  "is a race. Domain: program order within the iteration, groups carried across iterations."),
R("CK-RACE-004", CAT_SAFETY, SEV_ERROR, 1, "shared buffer written by two unordered roles",
  "Two roles that write the same shared buffer must be ordered by a barrier one arrives on and "
  "the other waits on; otherwise the writes race."),
R("CK-RACE-005", CAT_SAFETY, SEV_ERROR, 1, "generic store read by the async proxy without a fence",
  "A plain `store` to shared memory is a generic-proxy write; TMA stores and wgmma read through "
  "the async proxy. A `fence proxy_async` must come after the store and before the handoff "
  "(arrive) or the async read, in the writing role."),
R("CK-RACE-006", CAT_SAFETY, SEV_ERROR, 1, "accumulator read while wgmma in flight",
  "The accumulator of an asynchronous wgmma holds undefined values until its group retires; "
  "reading or overwriting it (assignment, store, epilogue math) needs a preceding "
  "`wgmma_wait` that retires every group writing it (usually `wgmma_wait 0`)."),
R("CK-RACE-007", CAT_SAFETY, SEV_ERROR, 1, "cross-role read without a handoff",
  "A role that reads a shared buffer written by another role must, before the read in program "
  "order, wait on a barrier that the writer arrives on (or that its TMA signals)."),
R("CK-RES-001", CAT_CONTRACT, SEV_ERROR, 1, "shared memory exceeds the per-block limit",
  "Derives the shared-memory layout the lowering will use: buffers in declaration order, "
  "aligned to 1024 B (128B swizzle), 512 B (64B), 256 B (32B), 128 B (TMA endpoints) or 16 B, "
  "ring buffers times stages, then 8-byte mbarriers times stages, plus alignment slack for the "
  "dynamic base. The total must fit the target's per-block limit (sm_90a and sm_100a 227 KB, "
  "sm_80 163 KB). The finding names the total and the biggest buffers."),
R("CK-RES-002", CAT_CONTRACT, SEV_ERROR, 1, "register file exceeded",
  "With per-role register budgets, the sum over roles of regs x threads must fit the 65536 "
  "32-bit registers of one SM (one block per SM)."),
R("CK-RES-003", CAT_CONTRACT, SEV_ERROR, 1, "setmaxnreg value",
  "A role's `regs` becomes setmaxnreg, which takes a multiple of 8 between 24 and 256."),
R("CK-RES-004", CAT_CONTRACT, SEV_ERROR, 1, "register budget per partial warpgroup",
  "setmaxnreg applies to a whole warpgroup; when roles have different budgets every role must "
  "cover whole warpgroups (first warp a multiple of 4, warp count a multiple of 4)."),
R("CK-RES-005", CAT_CONTRACT, SEV_ERROR, 1, "too many threads",
  "A block has at most 1024 threads (32 warps); the highest warp of any role sets the count."),
R("CK-RES-006", CAT_CONTRACT, SEV_ERROR, 1, "wgmma role not warpgroup-aligned",
  "wgmma is issued by whole warpgroups: a role issuing it must start at a warp that is a "
  "multiple of 4 and have a multiple of 4 warps."),
R("CK-RES-007", CAT_CONTRACT, SEV_ERROR, 1, "barrier limits",
  "Named barriers (`sync`) are limited to 16 per block, one reserved for __syncthreads, so at "
  "most 15 roles may use `sync`; an mbarrier's expected arrival count must be in 1..2^20-1."),
R("CK-RES-008", CAT_CONTRACT, SEV_ERROR, 1, "transaction bytes per phase",
  "An mbarrier's pending transaction count is limited to 2^20-1 bytes per phase; the derived "
  "TMA bytes signalling one barrier per phase must fit."),
R("CK-RES-009", CAT_CONTRACT, SEV_ERROR, 1, "overlapping role warp ranges",
  "Each warp belongs to exactly one role: role warp ranges must be disjoint and well-formed."),
R("CK-RES-010", CAT_CONTRACT, SEV_WARNING, 1, "fragments exceed the role's register budget",
  "Sums the 32-bit registers per thread that a role's fragments need (elements x size / 4 / "
  "threads holding them) and compares with the role's `regs`; more means certain spills."),
R("CK-SCHED-001", CAT_SCHEDULE, SEV_ERROR, 1, "accumulator used before initialisation",
  "`wgmma acc += ...` / `mma acc += ...` accumulates into acc; unless the role first "
  "initialises it (`acc = 0`, a non-accumulating `wgmma acc = ...`, or a load) it adds to "
  "garbage registers."),
R("CK-SCHED-002", CAT_SCHEDULE, SEV_WARNING, 1, "unused resource",
  "A declared shared buffer, barrier, fragment or pipeline that no statement uses costs "
  "shared memory or registers and usually means a schedule edit was left half done."),
R("CK-SCHED-003", CAT_SCHEDULE, SEV_WARNING, 1, "more stages than iterations",
  "A pipeline with more stages than the smallest trip count of its loop allowed by the domain "
  "never fills; the extra stages only cost shared memory."),
R("CK-SCHED-004", CAT_SCHEDULE, SEV_WARNING, 1, "dead role",
  "A role declared without an `in` block idles its warps (and still takes registers)."),
R("CK-SCHED-005", CAT_SCHEDULE, SEV_WARNING, 1, "empty role program",
  "A role whose `in` block contains no statement does nothing."),
R("CK-SCHED-006", CAT_SCHEDULE, SEV_NOTE, 1, "loop with zero iterations",
  "A loop whose trip count is zero at the smallest domain point runs no iteration there; its "
  "results (and anything waiting on it) rely on the other side running zero times too."),
R("CK-SCHED-007", CAT_SCHEDULE, SEV_WARNING, 1, "non-accumulating matmul inside a loop",
  "`wgmma acc = a @ b` (or mma) overwrites the accumulator; inside a loop whose trip count can "
  "exceed 1, every iteration discards the previous partial sum. Use `+=` after initialising."),
};

static const int rule_count = (int)NELEM(rule_table);

const Rule *rules_all(int *n)
{
	if (n)
		*n = rule_count;
	return rule_table;
}

const Rule *rule_find(const char *id)
{
	if (!id)
		return NULL;
	int lo = 0, hi = rule_count - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		int c = strcmp(id, rule_table[mid].id);
		if (c == 0)
			return &rule_table[mid];
		if (c < 0)
			hi = mid - 1;
		else
			lo = mid + 1;
	}
	/* fall back to a linear scan in case the table is ever unsorted */
	for (int i = 0; i < rule_count; i++)
		if (strcmp(id, rule_table[i].id) == 0)
			return &rule_table[i];
	return NULL;
}

const char *rule_cat_name(RuleCat c)
{
	switch (c) {
	case CAT_LANGUAGE: return "language";
	case CAT_SAFETY:   return "program safety";
	case CAT_CONTRACT: return "hardware contract";
	case CAT_DATA:     return "data consistency";
	case CAT_SCHEDULE: return "schedule semantics";
	}
	return "?";
}

void verifier_version_str(char buf[32])
{
	uint32_t h = 2166136261u;
	char tmp[64];
	for (int i = 0; i < rule_count; i++) {
		int n = snprintf(tmp, sizeof tmp, "%s:%d\n", rule_table[i].id, rule_table[i].version);
		for (int j = 0; j < n && j < (int)sizeof tmp; j++) {
			h ^= (unsigned char)tmp[j];
			h *= 16777619u;
		}
	}
	snprintf(buf, 32, "v1-%08x", (unsigned)h);
}

static char version_buf[32];
static pthread_once_t version_once = PTHREAD_ONCE_INIT;

static void version_init(void)
{
	verifier_version_str(version_buf);
}

const char *verifier_version(void)
{
	pthread_once(&version_once, version_init);
	return version_buf;
}

/* ---- printing the registry ---- */

static void md_escape(StrBuf *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			sb_puts(out, "\\|");
		else if (*s == '\n')
			sb_putc(out, ' ');
		else
			sb_putc(out, *s);
	}
}

static void print_markdown(StrBuf *out)
{
	sb_puts(out, "# Cake rule registry\n\n");
	sb_puts(out, "<!-- Generated by `make docs` (bin/cake rules --format=markdown) from "
	             "src/verify/registry.c. Do not edit by hand. -->\n\n");
	sb_printf(out, "Verifier version: `%s` (FNV-1a over every enabled `ID:version`). "
	          "%d rules.\n\n", verifier_version(), rule_count);
	sb_puts(out, "Authority: `error` blocks a candidate, `warning` reports, `note` hints.\n\n");
	static const RuleCat cats[] = { CAT_LANGUAGE, CAT_SAFETY, CAT_CONTRACT, CAT_DATA,
	                                CAT_SCHEDULE };
	sb_puts(out, "| ID | Category | Authority | Version | Title |\n");
	sb_puts(out, "|----|----------|-----------|---------|-------|\n");
	for (int i = 0; i < rule_count; i++) {
		const Rule *r = &rule_table[i];
		sb_printf(out, "| [%s](#%s) | %s | %s | %d | ", r->id, r->id, rule_cat_name(r->cat),
		          sev_name(r->sev), r->version);
		md_escape(out, r->title);
		sb_puts(out, " |\n");
	}
	for (size_t c = 0; c < NELEM(cats); c++) {
		sb_printf(out, "\n## %s\n", rule_cat_name(cats[c]));
		for (int i = 0; i < rule_count; i++) {
			const Rule *r = &rule_table[i];
			if (r->cat != cats[c])
				continue;
			sb_printf(out, "\n### %s\n\n**%s** — %s, version %d.\n\n", r->id, r->title,
			          sev_name(r->sev), r->version);
			sb_puts(out, r->rationale);
			sb_puts(out, "\n");
		}
	}
}

static void print_json(StrBuf *out)
{
	sb_puts(out, "{\"verifier_version\":");
	sb_json_str(out, verifier_version());
	sb_puts(out, ",\"rules\":[");
	for (int i = 0; i < rule_count; i++) {
		const Rule *r = &rule_table[i];
		sb_puts(out, i ? ",\n{" : "\n{");
		sb_puts(out, "\"id\":");
		sb_json_str(out, r->id);
		sb_puts(out, ",\"category\":");
		sb_json_str(out, rule_cat_name(r->cat));
		sb_puts(out, ",\"authority\":");
		sb_json_str(out, sev_name(r->sev));
		sb_printf(out, ",\"version\":%d,\"title\":", r->version);
		sb_json_str(out, r->title);
		sb_puts(out, ",\"rationale\":");
		sb_json_str(out, r->rationale);
		sb_puts(out, "}");
	}
	sb_puts(out, "\n]}\n");
}

static void print_text(StrBuf *out)
{
	sb_printf(out, "verifier %s, %d rules\n", verifier_version(), rule_count);
	for (int i = 0; i < rule_count; i++) {
		const Rule *r = &rule_table[i];
		sb_printf(out, "%-13s %-7s v%d  %-18s %s\n", r->id, sev_name(r->sev), r->version,
		          rule_cat_name(r->cat), r->title);
	}
}

void rules_print(StrBuf *out, const char *format)
{
	if (format && strcmp(format, "markdown") == 0)
		print_markdown(out);
	else if (format && strcmp(format, "json") == 0)
		print_json(out);
	else
		print_text(out);
}

/* ---- dispatch ---- */

void verify_kernel(Ctx *c, Kernel *k)
{
	if (!c || !k)
		return;
	VCtx v;
	vmodel_build(&v, c, k);
	verify_resource(&v);
	verify_contract(&v);
	verify_barrier(&v);
	verify_race(&v);
	verify_dataflow(&v);
	verify_schedule(&v);
	verify_deadlock(&v);
	vmodel_free(&v);
}
