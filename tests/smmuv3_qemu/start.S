/* Start-up for the SMMUv3 command-queue oracle image: QEMU enters _start at
 * EL1 (virt, cortex-a57, no EL2/EL3 unless virtualization=on/secure=on)
 * with the MMU and caches off, so VA == PA and every data access is
 * Device-nGnRnE (hence -mstrict-align for the C code). */
    .section .text.boot, "ax"
    .global _start
_start:
    ldr     x0, =__stack_top
    mov     sp, x0
    ldr     x0, =__bss_start
    ldr     x1, =__bss_end
1:  cmp     x0, x1
    b.hs    2f
    str     xzr, [x0], #8
    b       1b
2:  adr     x0, vectors
    msr     vbar_el1, x0
    isb
    mrs     x0, CurrentEL
    lsr     x0, x0, #2
    bl      harness_main
    bl      sd_exit
3:  b       3b

/* sd_exit(status): semihosting SYS_EXIT (0x18). On AArch64 x1 points at
 * { ADP_Stopped_ApplicationExit (0x20026), status }; with -semihosting QEMU
 * exits with that status. */
    .global sd_exit
sd_exit:
    adr     x1, exit_block
    mov     x2, #0x0026
    movk    x2, #0x2, lsl #16
    sxtw    x0, w0
    stp     x2, x0, [x1]
    mov     w0, #0x18
    hlt     #0xf000
4:  b       4b

/* semihosting(op, param): HLT #0xF000 with w0 = op, x1 = param. */
    .global sd_semihost
sd_semihost:
    hlt     #0xf000
    ret

    .balign 16
exit_block:
    .quad   0, 0

/* Any exception is a failure: report ESR/ELR/FAR and exit 3. */
    .section .text.vectors, "ax"
    .balign 2048
vectors:
    .rept   16
    .balign 128
    mov     x0, #3
    mrs     x1, esr_el1
    mrs     x2, elr_el1
    mrs     x3, far_el1
    b       harness_exception
    .endr
