/*
 * registry.c — the rule registry and the verifier version.
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
 * The registry sits in base/, below every stage: the front end, the
 * verifier and the lowering all report through it, and the diagnostic
 * printers (diag.c) read titles from it for SARIF. The verifier's dispatcher
 * (verify_kernel) is in src/verify/verify.c.
 */
#include "registry.h"

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
R("CK-BAR-005", CAT_SAFETY, SEV_ERROR, 1, "producer and consumer trip counts differ",
  "The roles that hand off through a pipeline must run the same number of pipelined "
  "iterations; otherwise one side waits for a stage the other never fills or releases. "
  "Compares the trip counts of loops pipelined on the same pipeline across roles, "
  "symbolically when the bounds are structurally equal and at sampled domain points "
  "otherwise. Domain: loop bounds built from constants, dims and enclosing loop variables."),
R("CK-DATA-001", CAT_DATA, SEV_ERROR, 1, "swizzle does not match the wgmma operand row",
  "Traces a shared buffer from the TMA that fills it to the wgmma that reads it. With a K-major "
  "operand the descriptor's swizzle mode must span exactly one row of the tile's K extent "
  "(64 bf16 = 128 B needs 128B swizzle, 32 bf16 = 64 B needs 64B); a mismatch makes the tensor "
  "core read permuted data. Reported at the wgmma with the TMA (producer end) as related span. "
  "Domain: sm_90a wgmma operands in shared memory with constant shapes."),
R("CK-DATA-002", CAT_DATA, SEV_ERROR, 1, "fragment split mismatch across warpgroups",
  "In a role of several warpgroups a fragment declared `split m` (or `split n`) holds a "
  "different slice of rows (columns) in each warpgroup, while an unsplit fragment is replicated. "
  "Traces the split through element-wise math, casts, row reductions and rows()/cols() "
  "broadcasts: combining an m-split value with an n-split one, assigning a split value to a "
  "replicated or differently split fragment (a warpgroup would hold only its own rows), or "
  "broadcasting an m-split row vector along columns with cols() mixes data of different "
  "warpgroups. Domain: fragments of roles with two or more warpgroups."),
R("CK-DATA-003", CAT_DATA, SEV_ERROR, 2, "loop tile stride differs from the tile length",
  "A copy inside a loop whose start along one dimension advances with the loop variable must "
  "advance by exactly the slice length per iteration: a smaller step re-reads overlapping tiles, "
  "a larger one skips data (typically after changing a tile size in one place only). Compares "
  "the start at two consecutive iterations with the length, for TMA, cp.async and load. The TMA "
  "loads into the column panels of one buffer fill it together: along the panel dimension the "
  "tile is the buffer's width (version 2; version 1 took each panel's box for the tile)."),
R("CK-DATA-004", CAT_DATA, SEV_ERROR, 1, "loop does not cover the tensor dimension",
  "A loop that walks a global tensor dimension tile by tile, starting at 0 with the tile length "
  "as step, must cover the whole extent: trips x tile == extent at every sampled domain point. "
  "Otherwise part of the reduction dimension is silently dropped (or read out of bounds). "
  "Domain: starts built from the loop variable and constants only (split-K offsets that "
  "depend on block coordinates are not judged)."),
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
R("CK-HW-005", CAT_CONTRACT, SEV_ERROR, 1, "wgmma operand major-ness",
  "A shared operand used as stored ([M,K] for A, b^T of an [N,K] buffer for B) is K-major. The "
  "other orientation is MN-major, which wgmma supports only for 16-bit types; f8 operands must "
  "be K-major."),
R("CK-HW-006", CAT_CONTRACT, SEV_ERROR, 1, "TMA box extent",
  "Every TMA box dimension must be between 1 and 256 elements (cuTensorMapEncodeTiled boxDim)."),
R("CK-HW-007", CAT_CONTRACT, SEV_ERROR, 1, "TMA inner box bytes",
  "The innermost box extent in bytes must be a multiple of 16 and, for a swizzled shared "
  "buffer, no larger than the swizzle span (128B swizzle: at most 128 bytes)."),
R("CK-HW-008", CAT_CONTRACT, SEV_ERROR, 1, "global stride alignment",
  "TMA requires every global stride to be a multiple of 16 bytes: the innermost extent times "
  "the element size must be a multiple of 16 under the domain constraints. Reported when a "
  "constant extent or the domain's modulus constraints prove it false."),
R("CK-HW-009", CAT_CONTRACT, SEV_ERROR, 1, "cp.async transfer size",
  "cp.async copies 4, 8 or 16 bytes per thread; the innermost contiguous extent of the copy in "
  "bytes must be a multiple of 4. Domain: sm_80 and later."),
R("CK-HW-010", CAT_CONTRACT, SEV_ERROR, 1, "instruction not available on the target",
  "wgmma, TMA, setmaxnreg (per-role regs), clusters and fence.proxy.async need sm_90a; wgmma "
  "does not exist on sm_100a (tcgen05 replaces it). mma.sync and cp.async are accepted on every "
  "target. The finding names the target."),
R("CK-HW-011", CAT_CONTRACT, SEV_ERROR, 1, "cluster size",
  "A thread-block cluster may hold at most 8 blocks (portable limit), each extent at least 1."),
R("CK-HW-012", CAT_CONTRACT, SEV_ERROR, 1, "mma.sync tile granularity",
  "mma.sync m16n8k16 (bf16/f16) tiles: accumulator rows a multiple of 16, columns a multiple of "
  "8, K a multiple of 16."),
R("CK-HW-013", CAT_CONTRACT, SEV_NOTE, 1, "global stride alignment not provable",
  "The domain does not constrain a symbolic innermost extent enough to prove the 16-byte TMA "
  "stride alignment (CK-HW-008); the runtime check in the launcher will decide. Add a modulus "
  "constraint to the domain."),
R("CK-LEX-001", CAT_LANGUAGE, SEV_ERROR, 1, "invalid character",
  "Names and operators are ASCII; a byte or character that starts no token (a non-ASCII "
  "character outside a comment, `$`, `;`, a control character) is reported once per run of "
  "adjacent bad bytes and skipped, so one stray byte does not hide the rest of the file. A "
  "lone `&`, `|` or `.` (and `b.T`) is reported too, then read as `&&`, `||`, `..` (and "
  "`b^T`) so that parsing continues. Models the lexical alphabet of docs/LANGUAGE.md."),
R("CK-LEX-002", CAT_LANGUAGE, SEV_ERROR, 1, "invalid UTF-8",
  "Source files must be valid UTF-8, comments included; an invalid byte sequence usually "
  "means the file was saved in another encoding or is binary. Reported at the first bad "
  "byte."),
R("CK-LEX-003", CAT_LANGUAGE, SEV_ERROR, 1, "unterminated block comment",
  "A `/*` comment that reaches the end of the file swallows everything after it; block "
  "comments do not nest. Reported at the opening `/*`."),
R("CK-LEX-004", CAT_LANGUAGE, SEV_ERROR, 1, "NUL byte",
  "A NUL byte anywhere in the source is rejected: Cake source is text, and NUL would "
  "silently truncate it for C-string consumers."),
R("CK-LEX-005", CAT_LANGUAGE, SEV_ERROR, 1, "number literal out of range",
  "Integer literals must fit in a signed 64-bit value and float literals in a double; "
  "larger values would be silently wrapped or rounded to infinity."),
R("CK-LEX-006", CAT_LANGUAGE, SEV_ERROR, 1, "malformed number",
  "A digit run immediately followed by letters (`12ab`), or a literal too long to be "
  "meaningful, is malformed; numbers must be separated from names."),
R("CK-LEX-007", CAT_LANGUAGE, SEV_NOTE, 1, "too many lexical errors",
  "After 50 lexical errors the lexer stops reporting them (it keeps tokenising), so a "
  "binary file produces a bounded, readable report."),
R("CK-LOW-001", CAT_LOWERING, SEV_ERROR, 1, "target not lowered",
  "Only sm_90a has a lowering; a kernel for sm_80 or sm_100a is checked but refused by "
  "`cake build` with this error instead of being silently lowered for another architecture."),
R("CK-LOW-002", CAT_LOWERING, SEV_ERROR, 1, "construct not lowered yet",
  "The sm_90a lowering does not implement this statement or expression form yet (for "
  "example tma stores, cp_async, mma, atomic_add, some builtins, scalar expressions reading "
  "tensors); it refuses rather than emitting wrong code."),
R("CK-LOW-003", CAT_LOWERING, SEV_ERROR, 1, "launch configuration not lowerable",
  "The role layout cannot be launched by the sm_90a code generator: warp ranges outside "
  "0..31, no roles, register budgets that are not whole warpgroups or exceed the register "
  "file."),
R("CK-LOW-004", CAT_LOWERING, SEV_ERROR, 1, "shared memory plan too large",
  "The derived shared-memory plan (buffers, barriers and alignment slack) exceeds 232448 "
  "bytes per block on sm_90a."),
R("CK-LOW-005", CAT_LOWERING, SEV_ERROR, 1, "non-constant extent",
  "Shared buffers, fragments and TMA boxes need constant positive extents to be laid out "
  "and encoded."),
R("CK-LOW-006", CAT_LOWERING, SEV_ERROR, 1, "TMA form not lowerable",
  "A TMA load must copy a slice of a global tensor parameter into a whole shared buffer "
  "(one stage), with a box of rank 1..5 that fills it exactly."),
R("CK-LOW-007", CAT_LOWERING, SEV_ERROR, 1, "barrier transaction plan not lowerable",
  "The per-phase expect_tx plan of a barrier cannot be derived: arrivals outside 1..2^20-1, "
  "or TMA loads signalling it under an `if` or spread over different loops."),
R("CK-LOW-008", CAT_LOWERING, SEV_ERROR, 1, "ring/pipeline plan not lowerable",
  "Ring buffers must name a known pipeline with 1..64 stages, and a ring barrier's TMA "
  "loads must sit directly in the loop pipelined on its ring."),
R("CK-LOW-009", CAT_LOWERING, SEV_ERROR, 1, "fragment not lowerable",
  "A fragment must belong to a known role and have rank 1 or 2 for the sm_90a register "
  "layout."),
R("CK-LOW-010", CAT_LOWERING, SEV_ERROR, 1, "grid or cluster not lowerable",
  "The kernel needs a `grid` with 1..3 extents; clusters of more than one CTA (multicast, "
  "remote arrivals) are not lowered yet."),
R("CK-LOW-011", CAT_LOWERING, SEV_ERROR, 1, "store form not lowerable",
  "Stores are lowered from register fragments into global tiles of matching shape (rank-1 "
  "stores only from a row-vector fragment covering its rows, f32/i32)."),
R("CK-LOW-012", CAT_LOWERING, SEV_ERROR, 1, "barrier phase convention conflict",
  "A ring barrier waited both by a role that writes the ring (its first wait starts free) "
  "and by one that only reads it (first wait needs a completed phase) cannot be given one "
  "phase convention."),
R("CK-LOW-013", CAT_LOWERING, SEV_ERROR, 1, "name collides with generated code",
  "A kernel, parameter, loop variable or let named like an identifier the CUDA code "
  "generator emits would shadow it; rename it."),
R("CK-LOW-014", CAT_LOWERING, SEV_ERROR, 1, "register spills",
  "NVRTC reports local-memory spills for the generated kernel; `cake build --emit=cubin` "
  "fails unless --allow-spills, since a spilling schedule is slow and usually mis-sized."),
R("CK-LOW-015", CAT_LOWERING, SEV_ERROR, 1, "shared memory over the block limit after lowering",
  "The lowering adds shared memory of its own: the triangular solve's scratch, in the plan's "
  "dynamic part, and the arrays of the cross-warp exchanges (reductions, scans, relayouts), "
  "placed in that scratch when the role has one and otherwise static. Dynamic plus static "
  "must fit the target's per-block limit (227 KB on sm_90a), or the launch is refused. ptxas "
  "reports the static part; CK-RES-001 checks the declared buffers before lowering."),
R("CK-MEM-001", CAT_SAFETY, SEV_ERROR, 1, "global output element never written",
  "Models what the grid as a whole writes to each global tensor that plain `store`s or TMA "
  "stores write: every tile of the grid (all block-coordinate tuples in the grid's extents; a "
  "persistent grid and a `group` raster visit the same tiles) runs every role program once, "
  "loops at their trip counts, `if` conditions and lets evaluated, each slice start an affine "
  "form in grid coordinates, loop variables and lets. At the sampled domain points (smallest "
  "first, `X == e` constraints applied, every domain constraint holding; as many as a budget "
  "of 20,000 visits per kernel allows, at most 6) the union of the written boxes must be the "
  "whole tensor, or the kernel returns stale memory (e.g. N / 256 CTAs storing 128-wide tiles "
  "leave half the columns). The finding names the unwritten rows/columns, the point and the "
  "grid. Not judged: tensors also written by atomic_add/fetch_add or by a scatter store (an "
  "index-vector slice), tensors the kernel also reads (an in-place update keeps what it does "
  "not write), and any point where a write depends on data (a bound, condition or index read "
  "from memory or a runtime scalar) or the budget ran out."),
R("CK-MEM-002", CAT_SAFETY, SEV_ERROR, 2, "global output element written twice",
  "Same model and points as CK-MEM-001: no element of a global tensor written by plain stores "
  "or TMA stores may be written by two executions — two CTAs (a tile index that does not "
  "depend on a grid coordinate, split-K partial sums stored instead of added), two roles, two "
  "statements or two iterations of a loop (a slice step smaller than its length). Without an "
  "atomic the result depends on which write lands last. Each decided write's box is placed on "
  "a grid of cells made from all box edges; the first cell met twice is reported with both "
  "writers, the overlapping box, the point and the grid. Writes under a condition or loop the "
  "model cannot evaluate are left out; tensors written by atomic_add/fetch_add or a scatter "
  "store are exempt (they are meant to be hit several times). A clipped TMA store writes the "
  "part of its box inside the tensor; a kernel that clips is also checked at the middle and the "
  "largest sampled points, where a ragged extent has several CTAs (version 2)."),
R("CK-MEM-003", CAT_SAFETY, SEV_ERROR, 2, "global access outside the tensor",
  "Every access to a global tensor — store, TMA store, atomic_add, fetch_add, load, TMA load, "
  "cp_async and element reads in expressions (`let lo = Offsets[c + 1]`) — must stay inside "
  "the tensor on every dimension, for every CTA and iteration, at every checked domain point "
  "(the model and points of CK-MEM-001): 0 <= start and start + length <= extent (e.g. "
  "`bm * 128 +: 256` with only M % 128 == 0). Plain accesses outside are undefined behaviour; "
  "TMA loads read zeros there and TMA stores drop the part outside, which is wrong data either "
  "way unless meant: a TMA box marked `clip` may run past the end (never before the start), "
  "its zeros and dropped elements being the point (a ragged last tile; version 2). Not judged: "
  "the dimension of a scatter index (the lowering skips rows outside), indices read from "
  "memory, and accesses under a bound or condition the model cannot evaluate."),
R("CK-MEM-004", CAT_SAFETY, SEV_ERROR, 1, "ring stage read after its release",
  "Inside a loop pipelined on P, `arrive B` on a ring barrier of P that gates a producer's "
  "refill of a ring buffer (the producer waits on B before writing the buffer in its "
  "iteration: the `empty` barrier) hands the current stage back; the producer may refill it "
  "as soon as the phase completes. A read of that buffer later in the same iteration of the "
  "same role (wgmma operand, `load` from it, TMA store from it, any expression) reads a stage "
  "that may be overwritten — unless the role still arrives, after the read, on another "
  "barrier gating the same refill (K and V released separately). Domain: program order "
  "(preorder) within one iteration of the pipelined loop; a read in the other branch of an "
  "`if` holding the arrive is not after it. A wgmma issued before the arrive and still in "
  "flight is CK-RACE-003."),
R("CK-RACE-001", CAT_SAFETY, SEV_ERROR, 2, "read of a stage before waiting on its full barrier",
  "Read-after-write: inside a pipelined loop, a role that reads a ring buffer (wgmma operand, "
  "load, expression) must first wait, in the same iteration, on a barrier that the buffer's "
  "writer signals after writing (its TMA `signal` barrier or a barrier it arrives on after the "
  "store). Also reported when that wait exists but starts free under the lowering's convention "
  "(the reading role itself writes buffers of the ring and no TMA signals the barrier), so the "
  "first pass over each stage reads before the data lands. Version 2: a barrier that a TMA "
  "signals never starts free, so a role that loads a ring by TMA and waits for its own loads "
  "is accepted. Domain: program order within one iteration of the pipelined "
  "loop."),
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
  "the other waits on; otherwise the writes race. Writes whose regions fold to constants and "
  "are disjoint in some dimension (two warpgroups staging their halves of a tile) are "
  "accepted; TMA writes cover the whole buffer."),
R("CK-RACE-005", CAT_SAFETY, SEV_ERROR, 2, "generic store read by the async proxy without a fence",
  "A plain `store` to shared memory is a generic-proxy write; TMA stores and wgmma read through "
  "the async proxy. A `fence proxy_async` must come after the store and before the handoff "
  "(arrive) or the async read, in the writing role. A TMA store is issued by one thread, so "
  "the stores of the role's other threads must also be behind a `sync` of the role (after the "
  "fence) before it (version 2)."),
R("CK-RACE-006", CAT_SAFETY, SEV_ERROR, 1, "accumulator read while wgmma in flight",
  "The accumulator of an asynchronous wgmma holds undefined values until its group retires; "
  "reading or overwriting it (assignment, store, epilogue math) needs a preceding "
  "`wgmma_wait` that retires every group writing it (usually `wgmma_wait 0`)."),
R("CK-RACE-007", CAT_SAFETY, SEV_ERROR, 1, "cross-role read without a handoff",
  "A role that reads a shared buffer written by another role must, before the read in program "
  "order, wait on a barrier that the writer arrives on (or that its TMA signals)."),
R("CK-RES-001", CAT_CONTRACT, SEV_ERROR, 1, "shared memory exceeds the per-block limit",
  "Derives the shared-memory layout the lowering uses: swizzled buffers aligned to 1024 B, "
  "TMA endpoints and wgmma operands to 128 B, others to 16 B, placed largest alignment first "
  "(declaration order within), ring buffers times stages, then 8-byte mbarriers times stages, "
  "plus alignment slack for the 16-byte-aligned dynamic base. The total must fit the target's "
  "per-block limit (sm_90a and sm_100a 227 KB, sm_80 163 KB). The finding names the total and "
  "the biggest buffers and suggests a stage count that fits."),
R("CK-RES-002", CAT_CONTRACT, SEV_ERROR, 2, "register file exceeded",
  "With per-role register budgets, the sum over roles of regs x threads must fit the registers "
  "the CTA is launched with: threads x the multiple of 8 at or below 65536 / threads (at most "
  "256), which is what ptxas gives a kernel that uses setmaxnreg. setmaxnreg only moves "
  "registers between warpgroups, so an increase the pool cannot cover waits forever (a 640-thread "
  "CTA has 61440, not 65536)."),
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
R("CK-RES-009", CAT_CONTRACT, SEV_WARNING, 1, "fragments exceed the role's register budget",
  "Sums the 32-bit registers per thread that a role's fragments need (elements x size / 4 / "
  "threads holding them: all the role's threads for a split fragment or a thread tile, one "
  "warpgroup's for an unsplit one, which every warpgroup replicates) and compares with the "
  "role's `regs`; more means certain spills (fragment lifetimes are not modelled, so it is a "
  "warning)."),
R("CK-RES-010", CAT_CONTRACT, SEV_ERROR, 1, "thread tile does not divide over its role",
  "A thread tile `frag T: DT[R, C] in ROLE lanes L` gives each warp of the role 32 / L rows at "
  "a time (L lanes per row), so the role's W warps cover W * 32 / L rows per pass and every "
  "thread holds R / (W * 32 / L) rows of C / L columns. R must be a multiple of W * 32 / L, or "
  "some threads would hold rows that do not exist and others rows twice; the row vectors of "
  "the tile (its rowsum, a rows() operand) are laid out the same way."),
R("CK-RES-011", CAT_CONTRACT, SEV_ERROR, 1, "fragment larger than a thread's registers",
  "A fragment is one register array that the lowering keeps whole; spread over the threads "
  "that hold it (every thread of the role when split or a thread tile, one warpgroup's "
  "otherwise), it must need at most the registers one thread can have: 255 on sm_90a, fewer "
  "when 65536 / (threads of the CTA) is lower. A larger one cannot be in registers at any "
  "moment, so ptxas keeps it in local memory: a certain spill, found before any compile."),
R("CK-SCHED-001", CAT_SCHEDULE, SEV_ERROR, 2, "fragment used before initialisation",
  "`wgmma acc += ...` / `mma acc += ...` accumulates into acc, and an assignment such as "
  "`o = o * rows(alpha)` reads its own target; unless the role first initialises the fragment "
  "(`acc = 0`, a non-accumulating `wgmma acc = ...`, or a load) it computes with garbage "
  "registers. Tracked in program order per role (loop bodies once, both if branches); inside "
  "`if j > c` with c the constant start of loop j, what the loop body writes counts as carried "
  "from an earlier iteration."),
R("CK-SCHED-002", CAT_SCHEDULE, SEV_WARNING, 1, "unused resource",
  "A declared shared buffer, barrier, fragment or pipeline that no statement uses costs "
  "shared memory or registers and usually means a schedule edit was left half done."),
R("CK-SCHED-003", CAT_SCHEDULE, SEV_WARNING, 2, "more stages than iterations",
  "A pipeline with more stages than the smallest trip count of its loop allowed by the domain "
  "never fills; the extra stages only cost shared memory. Not on a persistent grid's top-level "
  "loop, whose ring carries from tile to tile (a one-step loop over a 2-stage ring loads the "
  "next tile's operand; version 2)."),
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
R("CK-SEM-001", CAT_LANGUAGE, SEV_ERROR, 1, "duplicate name",
  "Every name in a kernel (param, const, dim, grid coordinate, role, pipeline, smem buffer, "
  "barrier, fragment) is declared once, and a loop variable or let may not reuse a name "
  "visible at that point; one name with two meanings makes every later use ambiguous for "
  "the reader and for the lowering. The finding points at the second declaration with a "
  "related span at the first; the first stays visible so later uses still resolve. Models "
  "the kernel's single flat namespace plus block scopes."),
R("CK-SEM-002", CAT_LANGUAGE, SEV_ERROR, 1, "unknown name",
  "An identifier (value, barrier, role, pipeline, fragment, tensor) that resolves to "
  "nothing visible in scope is reported with a \"did you mean 'X'?\" hint chosen by edit "
  "distance (at most 2) among the visible names of the expected kind. Loop variables exist "
  "only in their loop body and lets only to the end of their block, so a use outside that "
  "range is also reported here."),
R("CK-SEM-003", CAT_LANGUAGE, SEV_ERROR, 1, "wrong kind of name",
  "A name resolves, but to the wrong kind of thing for its position: `wait acc` (a fragment "
  "where a barrier is needed), `ring full` (a barrier where a pipeline is needed), a role "
  "used as a value, a param shape naming a role. The related span shows the declaration; "
  "the hint suggests a name of the right kind when one is close."),
R("CK-SEM-004", CAT_LANGUAGE, SEV_ERROR, 1, "not a compile-time constant",
  "smem and fragment shapes, cluster extents, const values and slice lengths must fold to "
  "integer constants at compile time (they fix storage sizes, TMA boxes and register "
  "counts); a dim, grid coordinate or loop variable there, a const that depends on itself, "
  "or a non-positive extent is an error. Symbolic sizes belong in global param shapes only."),
R("CK-SEM-005", CAT_LANGUAGE, SEV_ERROR, 1, "invalid constant arithmetic",
  "A division or modulo by zero, or a shift by a negative amount or by 63 or more, inside "
  "an expression that sema folds to a constant. Folding is otherwise checked 64-bit "
  "arithmetic (the one evaluator, front/eval.c): a result that overflows is not a constant, "
  "so the compiler itself has no undefined behaviour."),
R("CK-SEM-006", CAT_LANGUAGE, SEV_ERROR, 1, "reversed warp range",
  "A role's inclusive warp range `warps lo..hi` must have lo <= hi. An empty range would "
  "give a role with no threads whose program can never run."),
R("CK-SEM-007", CAT_LANGUAGE, SEV_ERROR, 1, "roles share warps",
  "Two roles whose warp ranges intersect would run two programs on the same warps. The "
  "finding names both roles and both ranges, with a related span at the earlier role and a "
  "hint with a free range. (Warpgroup alignment and the total warp budget are hardware "
  "limits checked by the verifier.)"),
R("CK-SEM-008", CAT_LANGUAGE, SEV_ERROR, 1, "pipeline without stages",
  "A pipeline needs at least one stage: ring buffers and ring barriers are replicated "
  "`stages` times and the stage index is iteration % stages. The parser range-checks the "
  "literal; sema re-checks because tactics build trees without parsing."),
R("CK-SEM-009", CAT_LANGUAGE, SEV_ERROR, 1, "split on too low a rank",
  "`split n` divides a fragment's columns over the role's warpgroups and needs rank >= 2; "
  "`split m` divides rows and needs rank >= 1 (row statistics such as a softmax max vector "
  "are split like the accumulator whose rows they describe)."),
R("CK-SEM-010", CAT_LANGUAGE, SEV_ERROR, 1, "bad domain constraint",
  "A `domain` constraint must be a boolean expression over symbolic dims and consts (e.g. "
  "`M % 128 == 0`, `K >= 64`); it describes the shapes a kernel accepts, so it cannot "
  "mention runtime values such as grid coordinates, roles or loop variables."),
R("CK-SEM-011", CAT_LANGUAGE, SEV_ERROR, 1, "bad grid extent",
  "A grid extent must be an integer expression over dims and consts (e.g. `N / 256`); it is "
  "evaluated on the host before launch from the tensor shapes, so nothing else is "
  "available. Also used for a param shape extent that is not an integer."),
R("CK-SEM-012", CAT_LANGUAGE, SEV_ERROR, 1, "grid or cluster rank",
  "A grid or cluster has 1 to 3 extents (CUDA's x, y, z). (A coordinate-name count that "
  "differs from the extent count is reported by the parser as CK-SYN-009.)"),
R("CK-SEM-013", CAT_LANGUAGE, SEV_ERROR, 1, "second grid or cluster",
  "A kernel has one launch grid and at most one cluster shape; a second `grid` or `cluster` "
  "declaration is reported with a related span at the first."),
R("CK-SEM-014", CAT_LANGUAGE, SEV_ERROR, 1, "statement outside a role",
  "The kernel body holds only `in ROLE { }` blocks: every statement runs in exactly one "
  "role, so any statement directly at top level has no executing role and no warps to run "
  "on."),
R("CK-SEM-015", CAT_LANGUAGE, SEV_ERROR, 1, "second block for a role",
  "Each role has one program; a second `in ROLE` block for the same role is reported with a "
  "related span at the first. (A role with no block at all is legal for sema; the verifier "
  "warns.)"),
R("CK-SEM-016", CAT_LANGUAGE, SEV_ERROR, 1, "nested role block",
  "`in ROLE` blocks appear only at the kernel's top level, never inside another role's "
  "program, a loop or an if. The parser reports the textual case as CK-SYN-010; sema "
  "re-checks trees built by tactics."),
R("CK-SEM-017", CAT_LANGUAGE, SEV_ERROR, 1, "ring used outside its pipelined loop",
  "A ring buffer or ring barrier of pipeline P means \"the current stage of P\", which only "
  "exists inside a loop `pipelined P` (stage = iteration % stages, phase derived). Any use "
  "elsewhere has no stage; the finding names the pipeline and points (related span) at the "
  "`ring P` clause of the declaration."),
R("CK-SEM-018", CAT_LANGUAGE, SEV_ERROR, 1, "nested pipelining of one pipeline",
  "Two nested loops pipelined over the same pipeline would give a ring two conflicting "
  "stage counters. The related span points at the enclosing loop's `pipelined` clause."),
R("CK-SEM-019", CAT_LANGUAGE, SEV_ERROR, 1, "role listed twice on a barrier",
  "A role named twice in a barrier's producers or consumers list: arrival accounting and "
  "ownership are per role, so the repetition is a typo or a miscounted `arrivals`."),
R("CK-SEM-020", CAT_LANGUAGE, SEV_ERROR, 1, "wait by a non-consumer",
  "`wait B` is allowed only in a role listed in B's consumers. The declared "
  "producer/consumer lists are the handoff contract that the verifier's deadlock and race "
  "models are built on; a wait by an undeclared role is a handoff the contract does not "
  "describe."),
R("CK-SEM-021", CAT_LANGUAGE, SEV_ERROR, 1, "arrive by a non-producer",
  "`arrive B` is allowed only in a role listed in B's producers, for the same reason: "
  "undeclared arrivals make the declared `arrivals` count meaningless."),
R("CK-SEM-022", CAT_LANGUAGE, SEV_ERROR, 1, "TMA signal by a non-producer",
  "`tma ... signal B` contributes an arrival and transaction bytes to B, so the issuing "
  "role must be one of B's producers."),
R("CK-SEM-023", CAT_LANGUAGE, SEV_ERROR, 1, "fragment touched by another role",
  "A register fragment lives in the registers of its owner role's threads; another role can "
  "neither read nor write it. The finding says who owns it and who touched it, with a "
  "related span at the `in ROLE` clause of the declaration; data crosses roles through smem "
  "buffers and barriers."),
R("CK-SEM-024", CAT_LANGUAGE, SEV_ERROR, 1, "copy shape mismatch",
  "For tma load/store and cp_async, the global tile's box lengths (points count as 1) and "
  "the smem buffer's shape must be equal after dropping extents of 1: the copy moves "
  "exactly one buffer (one stage of a ring). The related span shows the smem declaration."),
R("CK-SEM-025", CAT_LANGUAGE, SEV_ERROR, 1, "copy dtype mismatch",
  "TMA, cp.async and `load` move bytes and never convert: source and destination element "
  "types must be equal. The hint says to declare the destination in the source type and "
  "convert with a cast in an assignment."),
R("CK-SEM-026", CAT_LANGUAGE, SEV_ERROR, 1, "bad indexing",
  "A tensor must be indexed with exactly one slice per dimension; slice lengths must be "
  "positive; a TMA box needs explicit `start +: len` (or point) slices, not `:`; fragments "
  "cannot be indexed; ranks above 4 are not supported."),
R("CK-SEM-027", CAT_LANGUAGE, SEV_ERROR, 1, "wrong operand kind",
  "The statement needs a different kind of operand: tma/cp_async need a whole smem buffer "
  "on one side and an indexed global param on the other; load needs an indexed global/smem "
  "tile and a fragment destination; store/atomic_add need an indexed destination, and a "
  "transposed store (`store G[..] <- v^T`) a rank-2 tile of a global tensor; wgmma's A "
  "is smem or a fragment (never a transposed fragment) and its B must be smem; mma takes "
  "smem or fragments, and only adds (`-=` is wgmma's)."),
R("CK-SEM-028", CAT_LANGUAGE, SEV_ERROR, 1, "MMA dtypes",
  "The accumulator of wgmma/mma must be f32 or f16; the A and B operands must have the same "
  "element type, one of bf16, f16, f8e4m3. (Per-target support of each combination, e.g. "
  "K-major rules for f8, is the verifier's hardware contract.)"),
R("CK-SEM-029", CAT_LANGUAGE, SEV_ERROR, 1, "MMA shapes",
  "With A = a or a^T taken as [M, K] and B = b or b^T as [K, N], the accumulator must be "
  "[M, N] and the two K extents equal; all three are rank 2. The message prints the "
  "accumulator and both operand shapes; the hint suggests b^T when b is stored [N, K]."),
R("CK-SEM-030", CAT_LANGUAGE, SEV_ERROR, 1, "element-wise shape mismatch",
  "Element-wise operators, min/max/where, assignments and stores need equal shapes (after "
  "dropping extents of 1 for memory tiles), or a scalar operand, or an explicit broadcast "
  "rows(v) [M]->[M,N] / cols(v) [N]->[M,N]; there is no implicit broadcasting of vectors, "
  "so a vector/tile mismatch is always a bug or a missing rows()/cols(). Also covers tuple "
  "results of the wrong shape and trisolve's row count."),
R("CK-SEM-031", CAT_LANGUAGE, SEV_ERROR, 1, "implicit conversion",
  "Cake IR never converts implicitly: mixing two float dtypes (bf16 and f32), a float with "
  "an integer, or assigning/storing a value whose dtype differs from the target needs an "
  "explicit cast; the hint names it (e.g. `bf16(...)` for a bf16 destination). Integer "
  "constants and float literals adapt to the other operand's dtype; integer scalars (loop "
  "variables, dims, i64 params) widen among themselves."),
R("CK-SEM-032", CAT_LANGUAGE, SEV_ERROR, 1, "result count",
  "The number of names on the left of `=` must equal the builtin's result count: "
  "rowargmin/rowargmax/topk give (values, i32 indices) and must be assigned directly as `v, "
  "i = f(x)`; everything else gives one value."),
R("CK-SEM-033", CAT_LANGUAGE, SEV_ERROR, 1, "unknown function",
  "Calls name builtins only (there are no user functions); an unknown callee, or a declared "
  "non-function name used as one, is reported with the nearest builtin name as a "
  "suggestion."),
R("CK-SEM-034", CAT_LANGUAGE, SEV_ERROR, 1, "shape cannot be inferred",
  "rows(), cols(), row_idx() and col_idx() take part of their shape from the context (the "
  "other operand, else the statement's target). Used where no context supplies it, e.g. as "
  "the argument of a reduction, their shape is unknown; col_idx() also needs a rank-2 "
  "context."),
R("CK-SEM-035", CAT_LANGUAGE, SEV_ERROR, 1, "bad builtin argument",
  "A builtin got the wrong number of arguments or an argument its type rule rejects: a "
  "non-float argument to exp/log/sigmoid..., a non-rank-2 argument to a row/column "
  "reduction, tril/triu, trisolve or topk, a non-square L, a non-constant or out-of-range "
  "cumsum dimension or topk k, a cumsum segment length or trisolve block size that is not "
  "a constant dividing the dimension, a non-bool where() condition, a non-vector "
  "rows()/cols() argument."),
R("CK-SEM-036", CAT_LANGUAGE, SEV_ERROR, 1, "operator type",
  "An operator got operands of the wrong type class: && || ! need bool; % << >> need "
  "integers; arithmetic and ordering need numbers; loop bounds and slice indices need "
  "integers; `if` conditions need bool; ^T appears only on wgmma/mma operands and on the "
  "whole value of a store."),
R("CK-SEM-037", CAT_LANGUAGE, SEV_ERROR, 1, "not a value / not a scalar",
  "Shared-memory buffers and global tensors are not values: a tile must be `load`ed into a "
  "fragment before arithmetic (a fully point-indexed element is a scalar and is allowed). "
  "Lets, loop bounds, slice starts and if conditions must be scalars (uniform across the "
  "role), not fragments."),
R("CK-SEM-038", CAT_LANGUAGE, SEV_ERROR, 1, "barrier without arrivals",
  "A barrier must declare at least one arrival per phase; with zero the phase would "
  "complete immediately and protect nothing. The parser range-checks the literal; sema "
  "re-checks trees built by tactics."),
R("CK-SEM-039", CAT_LANGUAGE, SEV_ERROR, 1, "non-positive loop step",
  "A constant loop step must be positive: loops count upward over the half-open range "
  "lo..hi, so step 0 never terminates and a negative step never enters."),
R("CK-SEM-040", CAT_LANGUAGE, SEV_ERROR, 1, "assignment target is not a fragment",
  "Only register fragments are assigned with `=` (and are the destination of load, wgmma "
  "and mma); smem and global memory are written with store/tma/cp_async, and lets and loop "
  "variables are immutable."),
R("CK-SEM-041", CAT_LANGUAGE, SEV_ERROR, 1, "tile group below 1",
  "`grid (X, Y) as (bn, bm) group G` visits the tiles in groups of G consecutive rows of the "
  "second axis (a grouped raster, for L2 reuse of the operand tiles that concurrent CTAs "
  "share); G counts rows per group, so it must be at least 1. `group 1` is the natural order "
  "(x fastest); `group 0` would divide by zero in the tile mapping."),
R("CK-SEM-042", CAT_LANGUAGE, SEV_ERROR, 1, "tile group on a grid that is not 2-D",
  "The grouped raster maps one linear tile index onto the two block coordinates (x, y) of a "
  "2-D tile space: a 1-D grid has no second axis to group, and a 3-D grid has no defined "
  "order for its third axis, so `group` is accepted only on a grid with exactly two extents."),
R("CK-SEM-043", CAT_LANGUAGE, SEV_ERROR, 1, "unknown kernel family",
  "`family NAME` names the kernel family module (src/family/) that supplies the kernel's "
  "seeded inputs, shape refusals, float64 oracle with its tolerance, and operation counts; "
  "the runner never guesses a family from the parameter list. A name that no module "
  "registers is an error (with the nearest registered name as a hint), so a typo cannot "
  "silently leave a kernel unchecked. `cake families` lists the registered names."),
R("CK-SEM-044", CAT_LANGUAGE, SEV_ERROR, 1, "parameters do not fit the family",
  "A family binds the kernel's global parameters by name and checks their element types "
  "and ranks (for example `gemm`: A bf16[M, K], B bf16[N, K], C bf16 or f32 [M, N]). A "
  "kernel that names a family whose parameter contract it does not meet is rejected before "
  "anything runs, naming the parameter and what the family expects, because the family's "
  "oracle would otherwise read the wrong buffers."),
R("CK-SEM-045", CAT_LANGUAGE, SEV_ERROR, 1, "bad thread tile",
  "`frag T: DT[R, C] in ROLE lanes L` declares a thread tile: a rank-2 fragment for plain SIMT "
  "work whose rows are dealt to the role's warps and whose every row is spread over L "
  "consecutive lanes, C / L contiguous columns per lane (so a row load is one coalesced, "
  "vectorised access per lane and a row reduction is log2(L) shuffles). L must be a power of "
  "two that divides C so that the lanes of a row form an aligned group; the tile is already "
  "spread over every thread, so it cannot also be `split`; and its layout is not a tensor-core "
  "layout, so it cannot be a wgmma or mma accumulator or operand."),
R("CK-SYN-001", CAT_LANGUAGE, SEV_ERROR, 1, "unexpected token",
  "The parser expected a specific token or construct (named in the message with its "
  "context) and found another; it recovers at the next declaration or statement keyword so "
  "independent mistakes are all reported."),
R("CK-SYN-002", CAT_LANGUAGE, SEV_ERROR, 1, "unterminated block",
  "A `{` without its matching `}` before the end of the file; the message names the line of "
  "the opening brace."),
R("CK-SYN-003", CAT_LANGUAGE, SEV_ERROR, 1, "nesting too deep",
  "Statement or expression nesting deeper than the parser limit (256 levels by default) is "
  "reported once; it protects the compiler stack against pathological input."),
R("CK-SYN-004", CAT_LANGUAGE, SEV_ERROR, 1, "file contains no kernel",
  "A Cake file holds one or more kernels; an empty file (or one with only comments) is an "
  "error."),
R("CK-SYN-005", CAT_LANGUAGE, SEV_ERROR, 1, "reserved word used as a name",
  "Statement and declaration leaders (kernel, role, wait, tma, ...) and the literal `inf` "
  "cannot be used as names of values (params, consts, grid coordinates, shared buffers, "
  "fragments, loop variables, lets), where they would be ambiguous with a statement. Role, "
  "pipeline, barrier and kernel names may be any identifier (`role load`)."),
R("CK-SYN-006", CAT_LANGUAGE, SEV_ERROR, 1, "unknown keyword value",
  "An element type, swizzle, target or fence kind outside the fixed vocabulary "
  "(bf16/f16/f32/f8e4m3/i32/u32/i64/bool; none/32B/64B/128B; sm_90a/sm_80/sm_100a; "
  "proxy_async/cta/gpu)."),
R("CK-SYN-007", CAT_LANGUAGE, SEV_ERROR, 1, "literal out of range",
  "A literal in a declaration clause (warp numbers, regs, stages, arrivals, unroll) is "
  "outside the range the language allows; the message gives the range."),
R("CK-SYN-008", CAT_LANGUAGE, SEV_ERROR, 1, "duplicate clause",
  "An optional clause of a declaration or loop (swizzle, ring, step, pipelined, unroll, "
  "producers, ...) appears twice."),
R("CK-SYN-009", CAT_LANGUAGE, SEV_ERROR, 1, "clause count mismatch",
  "A grid with a different number of extents and coordinate names, or a barrier missing its "
  "producers, consumers or arrivals clause."),
R("CK-SYN-010", CAT_LANGUAGE, SEV_ERROR, 1, "role block not at top level",
  "`in ROLE { }` blocks appear only directly in the kernel body, never nested in a loop, an "
  "if or another role block."),
R("CK-SYN-011", CAT_LANGUAGE, SEV_NOTE, 1, "too many syntax errors",
  "After a bounded number of syntax errors parsing stops with this note, so garbage input "
  "yields a short report."),
R("CK-SYN-012", CAT_LANGUAGE, SEV_ERROR, 1, "too many dimensions",
  "Shapes have at most four extents (MAX_RANK); higher-rank tensors must be reshaped."),
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
	case CAT_LOWERING: return "lowering";
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
	             "src/base/registry.c. Do not edit by hand. -->\n\n");
	sb_printf(out, "Verifier version: `%s` (FNV-1a over every enabled `ID:version`). "
	          "%d rules.\n\n", verifier_version(), rule_count);
	sb_puts(out, "Authority: `error` blocks a candidate, `warning` reports, `note` hints.\n\n");
	static const RuleCat cats[] = { CAT_LANGUAGE, CAT_SAFETY, CAT_CONTRACT, CAT_DATA,
	                                CAT_SCHEDULE, CAT_LOWERING };
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
