/* Start-up for the VT-d invalidation-queue oracle image (tests/vtd_qemu.rs,
 * docs/vtd-qemu.md). QEMU's -kernel loads it as a multiboot v1 image (the
 * "a.out kludge": flag bit 16 and the address fields below, so QEMU copies
 * the flat file to load_addr and zeroes up to bss_end_addr; QEMU refuses
 * ELF64 multiboot images without it) and enters _start32 in 32-bit
 * protected mode, paging off, EAX = 0x2BADB002, EBX = the multiboot info.
 * This code builds identity-mapped page tables (2M pages, the first 4 GiB:
 * RAM and the DMAR registers at 0xfed90000), enables PAE, EFER.LME and
 * paging, loads a GDT with a 64-bit code segment, far-jumps to long mode
 * and calls harness_main(mbi). Exit: sd_exit(code) writes code to the
 * isa-debug-exit port 0xf4; QEMU exits with (code << 1) | 1. */
#define MB_MAGIC 0x1BADB002
#define MB_FLAGS 0x00010000

    .section .text.boot, "ax"
    .code32
    .balign 4
mb_header:
    .long   MB_MAGIC
    .long   MB_FLAGS
    .long   -(MB_MAGIC + MB_FLAGS)
    .long   mb_header               /* header_addr */
    .long   __load_start            /* load_addr */
    .long   __load_end              /* load_end_addr */
    .long   __bss_end               /* bss_end_addr */
    .long   _start32                /* entry_addr */

    .global _start32
_start32:
    cli
    mov     %ebx, %esi              /* multiboot info, kept in esi */
    /* clear .bss (QEMU zeroes it too; the page tables live there) */
    mov     $__bss_start, %edi
    mov     $__bss_end, %ecx
    sub     %edi, %ecx
    xor     %eax, %eax
    cld
    rep stosb
    /* PML4[0] -> PDPT; PDPT[0..3] -> PD0..PD3; PDk[i] = 2M page */
    mov     $pdpt, %eax
    or      $0x3, %eax
    mov     %eax, pml4
    mov     $pd, %eax
    or      $0x3, %eax
    mov     $pdpt, %edi
    mov     $4, %ecx
1:  mov     %eax, (%edi)
    add     $0x1000, %eax
    add     $8, %edi
    loop    1b
    /* 2048 entries: P | RW | PS; PCD | PWT from 3 GiB up (MMIO) */
    mov     $pd, %edi
    xor     %ebx, %ebx              /* physical address >> 21 */
2:  mov     %ebx, %eax
    shl     $21, %eax
    or      $0x83, %eax
    cmp     $0x600, %ebx
    jb      3f
    or      $0x18, %eax
3:  mov     %eax, (%edi)
    mov     %ebx, %eax
    shr     $11, %eax               /* bits 32.. of the address */
    mov     %eax, 4(%edi)
    add     $8, %edi
    inc     %ebx
    cmp     $2048, %ebx
    jb      2b

    mov     $pml4, %eax
    mov     %eax, %cr3
    mov     %cr4, %eax
    or      $0x620, %eax            /* PAE | OSFXSR | OSXMMEXCPT */
    mov     %eax, %cr4
    mov     $0xC0000080, %ecx       /* EFER */
    rdmsr
    or      $0x100, %eax            /* LME */
    wrmsr
    mov     %cr0, %eax
    and     $~0x4, %eax             /* EM off */
    or      $0x80000023, %eax       /* PG | NE | MP | PE */
    mov     %eax, %cr0
    lgdt    gdt_ptr
    ljmp    $0x08, $long_entry

    .code64
long_entry:
    mov     $0x10, %ax
    mov     %ax, %ds
    mov     %ax, %es
    mov     %ax, %ss
    xor     %ax, %ax
    mov     %ax, %fs
    mov     %ax, %gs
    mov     $__stack_top, %rsp
    call    idt_setup
    mov     %esi, %edi
    call    harness_main
    mov     %eax, %edi
    call    sd_exit
4:  hlt
    jmp     4b

/* sd_exit(code): isa-debug-exit,iobase=0xf4,iosize=4 */
    .global sd_exit
sd_exit:
    mov     %edi, %eax
    mov     $0xf4, %dx
    outl    %eax, %dx
5:  cli
    hlt
    jmp     5b

/* long sd_call_checked(void *fn, const unsigned long args[10], unsigned long *bad):
 * calls fn(args[0], ..., args[9]) (SysV: six in registers, four on the
 * stack) with rbx and r12..r15 holding known values and counts in *bad
 * those that differ afterwards, and whether rbp or rsp moved (the callee
 * must preserve them all). */
    .global sd_call_checked
sd_call_checked:
    push    %rbp
    mov     %rsp, %rbp
    push    %rbx
    push    %r12
    push    %r13
    push    %r14
    push    %r15
    push    %rdx                    /* bad; rsp is 16-aligned here */
    mov     %rsp, chk_rsp(%rip)
    mov     %rbp, chk_rbp(%rip)
    mov     %rdi, %r11
    mov     %rsi, %r10
    pushq   72(%r10)
    pushq   64(%r10)
    pushq   56(%r10)
    pushq   48(%r10)
    mov     (%r10), %rdi
    mov     8(%r10), %rsi
    mov     16(%r10), %rdx
    mov     24(%r10), %rcx
    mov     32(%r10), %r8
    mov     40(%r10), %r9
    movabs  $0x1b1b1b1b1b1b1b1b, %rbx
    movabs  $0x1c1c1c1c1c1c1c1c, %r12
    movabs  $0x1d1d1d1d1d1d1d1d, %r13
    movabs  $0x1e1e1e1e1e1e1e1e, %r14
    movabs  $0x1f1f1f1f1f1f1f1f, %r15
    call    *%r11
    add     $32, %rsp
    xor     %ecx, %ecx
    movabs  $0x1b1b1b1b1b1b1b1b, %rdx
    cmp     %rdx, %rbx
    setne   %dl
    movzbl  %dl, %edx
    add     %rdx, %rcx
    movabs  $0x1c1c1c1c1c1c1c1c, %rdx
    cmp     %rdx, %r12
    setne   %dl
    movzbl  %dl, %edx
    add     %rdx, %rcx
    movabs  $0x1d1d1d1d1d1d1d1d, %rdx
    cmp     %rdx, %r13
    setne   %dl
    movzbl  %dl, %edx
    add     %rdx, %rcx
    movabs  $0x1e1e1e1e1e1e1e1e, %rdx
    cmp     %rdx, %r14
    setne   %dl
    movzbl  %dl, %edx
    add     %rdx, %rcx
    movabs  $0x1f1f1f1f1f1f1f1f, %rdx
    cmp     %rdx, %r15
    setne   %dl
    movzbl  %dl, %edx
    add     %rdx, %rcx
    cmp     chk_rbp(%rip), %rbp
    setne   %dl
    movzbl  %dl, %edx
    add     %rdx, %rcx
    cmp     chk_rsp(%rip), %rsp
    setne   %dl
    movzbl  %dl, %edx
    add     %rdx, %rcx
    mov     chk_rsp(%rip), %rsp
    mov     chk_rbp(%rip), %rbp
    pop     %rdx
    mov     %rcx, (%rdx)
    pop     %r15
    pop     %r14
    pop     %r13
    pop     %r12
    pop     %rbx
    pop     %rbp
    ret

/* Exceptions 0..31: push a dummy error code where the CPU pushes none,
 * then the vector, and report through harness_exception(vector, error,
 * rip, cr2), which exits with 3. */
    .macro  vec n
    .balign 16
vec\n:
    .if (\n == 8) || (\n >= 10 && \n <= 14) || (\n == 17) || (\n == 21) || (\n == 29) || (\n == 30)
    .else
    push    $0
    .endif
    push    $\n
    jmp     exc_common
    .endm
    .balign 16
vectors:
    .altmacro
    .set    i, 0
    .rept   32
    vec     %i
    .set    i, i + 1
    .endr
exc_common:
    pop     %rdi                    /* vector */
    pop     %rsi                    /* error code */
    mov     (%rsp), %rdx            /* rip */
    mov     %cr2, %rcx
    and     $~0xf, %rsp
    call    harness_exception
6:  hlt
    jmp     6b

/* 64-bit interrupt gates for vectors 0..31, selector 0x08 */
idt_setup:
    lea     idt(%rip), %rdi
    lea     vectors(%rip), %rax
    mov     $32, %ecx
7:  mov     %rax, %rdx
    mov     %dx, (%rdi)             /* offset 15:0 */
    movw    $0x08, 2(%rdi)
    movw    $0x8e00, 4(%rdi)        /* present, DPL 0, interrupt gate */
    shr     $16, %rdx
    mov     %dx, 6(%rdi)            /* offset 31:16 */
    shr     $16, %rdx
    mov     %edx, 8(%rdi)           /* offset 63:32 */
    movl    $0, 12(%rdi)
    add     $16, %rdi
    add     $16, %rax
    loop    7b
    lidt    idt_ptr(%rip)
    ret

    .section .rodata.boot, "a"
    .balign 16
gdt:
    .quad   0
    .quad   0x00af9a000000ffff      /* 0x08: 64-bit code */
    .quad   0x00cf92000000ffff      /* 0x10: data */
gdt_end:
gdt_ptr:
    .word   gdt_end - gdt - 1
    .long   gdt
    .balign 16
idt_ptr:
    .word   32 * 16 - 1
    .quad   idt

    .section .bss.pgtables, "aw", @nobits
    .balign 4096
pml4:
    .skip   4096
pdpt:
    .skip   4096
pd:
    .skip   4 * 4096
idt:
    .skip   32 * 16
    .balign 8
chk_rsp:
    .skip   8
chk_rbp:
    .skip   8
