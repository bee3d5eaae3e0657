/*
 * The kernel's (and skiboot's) MMIO accessors and barriers, per
 * architecture, as the reference transcriptions in this directory use
 * them. Each is what the cited header makes of it, written as inline asm
 * or a volatile access so that gcc -O2 keeps exactly that instruction.
 * Sources: Linux 6.1 (Debian linux-source-6.1)
 *   arch/arm64/include/asm/{barrier,io}.h, include/asm-generic/io.h,
 *   arch/powerpc/include/asm/{barrier,io}.h,
 *   arch/x86/include/asm/{barrier,io}.h,
 *   arch/riscv/include/asm/{barrier,fence,mmio}.h;
 * skiboot v7.1 include/io.h, include/processor.h.
 * Not kernel code: REF_POLL_LIMIT (below) and the non-POWER versions of
 * POWER-only primitives, each marked "port".
 */
#ifndef REF_KERNEL_H
#define REF_KERNEL_H

#include <stddef.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#define __iomem
#define ETIMEDOUT 110

/*
 * Every wait loop of the transcriptions gives up after this many reads
 * and returns -ETIMEDOUT, as the examples' `poll ... limit N else return
 * -110` do. The kernel spins forever (npu-dma.c), backs off with udelay
 * and only logs (arm-smmu.c), or panics (intel iommu.c): a test cannot
 * run those. The test passes the spec's limit.
 */
#ifndef REF_POLL_LIMIT
#error "build with -DREF_POLL_LIMIT=N"
#endif

#define barrier() __asm__ __volatile__("" ::: "memory")

#if defined(__aarch64__)
/* arch/arm64/include/asm/barrier.h */
#define isb() __asm__ __volatile__("isb" ::: "memory")
#define dmb(opt) __asm__ __volatile__("dmb " #opt ::: "memory")
#define dsb(opt) __asm__ __volatile__("dsb " #opt ::: "memory")
#define mb() dsb(sy)
#define rmb() dsb(ld)
#define wmb() dsb(st)
#define dma_rmb() dmb(oshld)
#define dma_wmb() dmb(oshst)
/* arch/arm64/include/asm/processor.h */
#define cpu_relax() __asm__ __volatile__("yield" ::: "memory")

/* arch/arm64/include/asm/io.h: the raw accessors are one str/ldr. */
static inline void __raw_writel(u32 val, volatile void __iomem *addr)
{
	__asm__ __volatile__("str %w0, [%1]" : : "rZ"(val), "r"(addr));
}
static inline void __raw_writeq(u64 val, volatile void __iomem *addr)
{
	__asm__ __volatile__("str %x0, [%1]" : : "rZ"(val), "r"(addr));
}
static inline u32 __raw_readl(const volatile void __iomem *addr)
{
	u32 val;
	__asm__ __volatile__("ldr %w0, [%1]" : "=r"(val) : "r"(addr));
	return val;
}
static inline u64 __raw_readq(const volatile void __iomem *addr)
{
	u64 val;
	__asm__ __volatile__("ldr %0, [%1]" : "=r"(val) : "r"(addr));
	return val;
}
/* __io_ar: dma_rmb() plus a dummy control dependency on the value. */
#define __iormb(v)                                                              \
	({                                                                      \
		unsigned long __tmp;                                            \
		dma_rmb();                                                      \
		__asm__ __volatile__("eor %0, %1, %1\n\tcbnz %0, ."             \
				     : "=r"(__tmp)                              \
				     : "r"((unsigned long)(v))                  \
				     : "memory");                               \
	})
#define __iowmb() dma_wmb()
#define cpu_to_le32(v) ((u32)(v))
#define cpu_to_le64(v) ((u64)(v))
#define cpu_to_be64(v) __builtin_bswap64(v)
#define le32_to_cpu(v) ((u32)(v))
#define le64_to_cpu(v) ((u64)(v))
/* include/asm-generic/io.h with arm64's __io_{ar,bw} */
#define writel_relaxed(v, c) __raw_writel(cpu_to_le32(v), c)
#define writeq_relaxed(v, c) __raw_writeq(cpu_to_le64(v), c)
#define readl_relaxed(c) le32_to_cpu(__raw_readl(c))
#define readq_relaxed(c) le64_to_cpu(__raw_readq(c))
#define writel(v, c) ({ __iowmb(); writel_relaxed(v, c); })
#define writeq(v, c) ({ __iowmb(); writeq_relaxed(v, c); })
#define readl(c) ({ u32 __v = readl_relaxed(c); __iormb(__v); __v; })
#define readq(c) ({ u64 __v = readq_relaxed(c); __iormb(__v); __v; })

#elif defined(__powerpc64__)
/* arch/powerpc/include/asm/barrier.h */
#define mb() __asm__ __volatile__("sync" ::: "memory")
#define rmb() __asm__ __volatile__("sync" ::: "memory")
#define wmb() __asm__ __volatile__("sync" ::: "memory")
/* arch/powerpc/include/asm/synch.h */
#define eieio() __asm__ __volatile__("eieio" ::: "memory")
#define isync() __asm__ __volatile__("isync" ::: "memory")
/* arch/powerpc/include/asm/vdso/processor.h: HMT_low(); HMT_medium() */
#define cpu_relax() __asm__ __volatile__("or 1,1,1\n\tor 2,2,2" ::: "memory")

/* arch/powerpc/include/asm/io.h: the raw accessors are plain volatile
 * accesses; in_/out_ have sync before, in_ twi+isync after. */
static inline void __raw_writeq(unsigned long v, volatile void __iomem *addr)
{
	*(volatile unsigned long *)addr = v;
}
static inline unsigned long __raw_readq(const volatile void __iomem *addr)
{
	return *(const volatile unsigned long *)addr;
}
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define cpu_to_be64(v) ((u64)(v))
#define ST_LE32 "stwbrx %1,0,%0"
#define LD_LE32 "lwbrx %0,0,%1"
#define LE64(v) __builtin_bswap64(v)
#else
#define cpu_to_be64(v) __builtin_bswap64(v)
#define ST_LE32 "stw %1,0(%0)"
#define LD_LE32 "lwz %0,0(%1)"
#define LE64(v) ((u64)(v))
#endif
static inline void out_le32(volatile u32 __iomem *addr, u32 val)
{
	__asm__ __volatile__("sync\n\t" ST_LE32 : : "b"(addr), "r"(val) : "memory");
}
static inline u32 in_le32(const volatile u32 __iomem *addr)
{
	u32 ret;
	__asm__ __volatile__("sync\n\t" LD_LE32 "\n\ttwi 0,%0,0\n\tisync"
			     : "=r"(ret) : "b"(addr) : "memory");
	return ret;
}
/* out_be64 is sync; std. out_le64 is out_be64 of the swapped value on
 * BE, sync; std on LE: either way sync; std of the register's bytes. */
static inline void out_be64(volatile u64 __iomem *addr, u64 val)
{
	__asm__ __volatile__("sync\n\tstd %1,0(%0)" : : "b"(addr), "r"(cpu_to_be64(val)) : "memory");
}
static inline void out_le64(volatile u64 __iomem *addr, u64 val)
{
	__asm__ __volatile__("sync\n\tstd %1,0(%0)" : : "b"(addr), "r"(LE64(val)) : "memory");
}
static inline u64 in_le64(const volatile u64 __iomem *addr)
{
	u64 ret;
	__asm__ __volatile__("sync\n\tld %0,0(%1)\n\ttwi 0,%0,0\n\tisync"
			     : "=r"(ret) : "b"(addr) : "memory");
	return LE64(ret);
}
#define writel(v, c) out_le32((volatile u32 *)(c), v)
#define writeq(v, c) out_le64((volatile u64 *)(c), v)
#define readl(c) in_le32((const volatile u32 *)(c))
#define readq(c) in_le64((const volatile u64 *)(c))
/* io.h: "#define writel_relaxed(v, addr) writel(v, addr)" and so on. */
#define writel_relaxed(v, c) writel(v, c)
#define writeq_relaxed(v, c) writeq(v, c)
#define readl_relaxed(c) readl(c)
#define readq_relaxed(c) readq(c)

#elif defined(__x86_64__)
/* arch/x86/include/asm/barrier.h (CONFIG_X86_64) */
#define mb() __asm__ __volatile__("mfence" ::: "memory")
#define rmb() __asm__ __volatile__("lfence" ::: "memory")
#define wmb() __asm__ __volatile__("sfence" ::: "memory")
/* arch/x86/include/asm/vdso/processor.h: rep_nop() */
#define cpu_relax() __asm__ __volatile__("rep; nop" ::: "memory")
/* arch/x86/include/asm/io.h build_mmio_{read,write}: one mov; the
 * non-relaxed forms add a "memory" clobber, nothing else. */
static inline void writel(u32 val, volatile void __iomem *addr)
{
	__asm__ __volatile__("movl %0,%1" : : "r"(val), "m"(*(volatile u32 *)addr) : "memory");
}
static inline void writeq(u64 val, volatile void __iomem *addr)
{
	__asm__ __volatile__("movq %0,%1" : : "r"(val), "m"(*(volatile u64 *)addr) : "memory");
}
static inline u32 readl(const volatile void __iomem *addr)
{
	u32 ret;
	__asm__ __volatile__("movl %1,%0" : "=r"(ret) : "m"(*(const volatile u32 *)addr) : "memory");
	return ret;
}
static inline u64 readq(const volatile void __iomem *addr)
{
	u64 ret;
	__asm__ __volatile__("movq %1,%0" : "=r"(ret) : "m"(*(const volatile u64 *)addr) : "memory");
	return ret;
}
static inline void __writel(u32 val, volatile void __iomem *addr)
{
	__asm__ __volatile__("movl %0,%1" : : "r"(val), "m"(*(volatile u32 *)addr));
}
static inline void __writeq(u64 val, volatile void __iomem *addr)
{
	__asm__ __volatile__("movq %0,%1" : : "r"(val), "m"(*(volatile u64 *)addr));
}
static inline u32 __readl(const volatile void __iomem *addr)
{
	u32 ret;
	__asm__ __volatile__("movl %1,%0" : "=r"(ret) : "m"(*(const volatile u32 *)addr));
	return ret;
}
static inline u64 __readq(const volatile void __iomem *addr)
{
	u64 ret;
	__asm__ __volatile__("movq %1,%0" : "=r"(ret) : "m"(*(const volatile u64 *)addr));
	return ret;
}
#define writel_relaxed(v, a) __writel(v, a)
#define writeq_relaxed(v, a) __writeq(v, a)
#define readl_relaxed(a) __readl(a)
#define readq_relaxed(a) __readq(a)
#define __raw_writeq __writeq
#define __raw_readq __readq
#define cpu_to_be64(v) __builtin_bswap64(v)

#elif defined(__riscv) && __riscv_xlen == 64
/* arch/riscv/include/asm/{barrier,fence}.h (RISCV_FENCE) */
#define RISCV_FENCE(p, s) __asm__ __volatile__("fence " #p "," #s ::: "memory")
#define mb() RISCV_FENCE(iorw, iorw)
#define rmb() RISCV_FENCE(ir, ir)
#define wmb() RISCV_FENCE(ow, ow)
/* arch/riscv/include/asm/vdso/processor.h without Zihintpause: a
 * division by zero stalls the pipeline briefly. */
#define cpu_relax()                                                             \
	do {                                                                    \
		int __d;                                                        \
		__asm__ __volatile__("div %0, %0, zero" : "=r"(__d));           \
		barrier();                                                      \
	} while (0)
/* arch/riscv/include/asm/mmio.h: the raw accessors are one sw/lw/sd/ld;
 * readX adds __io_ar() (fence i,r) after, writeX __io_bw() (fence w,o)
 * before. */
static inline void __raw_writel(u32 val, volatile void __iomem *addr)
{
	__asm__ __volatile__("sw %0, 0(%1)" : : "rZ"(val), "r"(addr));
}
static inline void __raw_writeq(u64 val, volatile void __iomem *addr)
{
	__asm__ __volatile__("sd %0, 0(%1)" : : "rZ"(val), "r"(addr));
}
static inline u32 __raw_readl(const volatile void __iomem *addr)
{
	u32 val;
	__asm__ __volatile__("lw %0, 0(%1)" : "=r"(val) : "r"(addr));
	return val;
}
static inline u64 __raw_readq(const volatile void __iomem *addr)
{
	u64 val;
	__asm__ __volatile__("ld %0, 0(%1)" : "=r"(val) : "r"(addr));
	return val;
}
#define cpu_to_be64(v) __builtin_bswap64(v)
#define writel_relaxed(v, c) __raw_writel((u32)(v), c)
#define writeq_relaxed(v, c) __raw_writeq((u64)(v), c)
#define readl_relaxed(c) __raw_readl(c)
#define readq_relaxed(c) __raw_readq(c)
#define writel(v, c) ({ RISCV_FENCE(w, o); writel_relaxed(v, c); })
#define writeq(v, c) ({ RISCV_FENCE(w, o); writeq_relaxed(v, c); })
#define readl(c) ({ u32 __v = readl_relaxed(c); RISCV_FENCE(i, r); __v; })
#define readq(c) ({ u64 __v = readq_relaxed(c); RISCV_FENCE(i, r); __v; })

#else
#error "tests/reference: unsupported architecture"
#endif

#if !defined(__powerpc64__)
/*
 * Ports of POWER-only primitives, for the examples that target every
 * architecture although their kernel code is POWER code (npu-dma.c,
 * skiboot). eieio() orders cache-inhibited accesses among themselves:
 * the portable kernel spelling of that is wmb(). skiboot's out_be64() is
 * sync() then the store: mb() then the store of the big-endian bytes.
 */
#define eieio() wmb()
static inline void out_be64(volatile u64 __iomem *addr, u64 val)
{
	mb();
	__raw_writeq(cpu_to_be64(val), addr);
}
#endif

/* powerpc io.h (v5.2): __raw_writeq_be(v, a) = __raw_writeq(cpu_to_be64(v), a) */
#define __raw_writeq_be(v, a) __raw_writeq(cpu_to_be64(v), a)

#endif
