# Bit operations on the core's city and route bitsets, compiled inline into every module
# that cimports them. Counting and scanning use compiler builtins where they exist.
from libc.stdint cimport uint64_t


cdef extern from *:
    """
    #if defined(_MSC_VER)
    #include <intrin.h>
    static inline int ttr_bits_ctz(unsigned long long x) { unsigned long i; _BitScanForward64(&i, x); return (int)i; }
    #else
    static inline int ttr_bits_ctz(unsigned long long x) { return __builtin_ctzll(x); }
    #endif
    #if defined(__POPCNT__)
    /* the build targets a CPU with a popcount instruction (setup.py adds -mpopcnt) */
    static inline int ttr_bits_count(unsigned long long x) { return __builtin_popcountll(x); }
    #else
    static inline int ttr_bits_count(unsigned long long x) {
        /* SWAR count: no call into libgcc when the target lacks a popcount instruction */
        x = x - ((x >> 1) & 0x5555555555555555ULL);
        x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
        x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
        return (int)((x * 0x0101010101010101ULL) >> 56);
    }
    #endif
    """
    int ttr_bits_ctz(uint64_t x) noexcept nogil      # index of the lowest set bit (x != 0)
    int ttr_bits_count(uint64_t x) noexcept nogil    # number of set bits


cdef inline int lowest_bit(uint64_t x) noexcept nogil:
    return ttr_bits_ctz(x)


cdef inline int count_bits(uint64_t x) noexcept nogil:
    return ttr_bits_count(x)


cdef inline int count_bits2(const uint64_t* bits) noexcept nogil:
    """Set bits of a two-word (route or ticket) bitset."""
    return ttr_bits_count(bits[0]) + ttr_bits_count(bits[1])


cdef inline bint get_bit(const uint64_t* bits, int i) noexcept nogil:
    return (bits[i >> 6] >> (i & 63)) & 1


cdef inline void set_bit(uint64_t* bits, int i) noexcept nogil:
    bits[i >> 6] |= (<uint64_t>1) << (i & 63)


cdef inline void clear_bit(uint64_t* bits, int i) noexcept nogil:
    bits[i >> 6] &= ~((<uint64_t>1) << (i & 63))


cdef inline int nth_bit2(const uint64_t* bits, int n) noexcept nogil:
    """Index of the n-th set bit (from 0) of a two-word bitset holding more than n: a
    binary search on bit counts, without a branch (n is random where it is used)."""
    cdef int first = ttr_bits_count(bits[0])
    cdef int high = n >= first
    cdef uint64_t x = bits[high]
    cdef int pos = 0, width = 32, c, step
    n -= first & -high
    while width:
        c = ttr_bits_count((x >> pos) & (((<uint64_t>1) << width) - 1))
        step = n >= c
        pos += width & -step
        n -= c & -step
        width >>= 1
    return (high << 6) + pos
