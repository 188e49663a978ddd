package org.dpdl4j.secagg;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Random;

/**
 * Exact sampler for the discrete Gaussian N_Z(0, σ²): P[X = x] ∝ exp(−x²/(2σ²)) on the integers
 * (Canonne, Kamath &amp; Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020,
 * Algorithms 1–3). All Bernoulli trials use exact rational arithmetic on {@link BigInteger}s, so the
 * output distribution is exactly N_Z(0, σ²) given a uniform bit source; no floating point touches
 * the sampled value (floating-point Gaussians leak through their low bits, Mironov 2012).
 *
 * <p>σ² is taken as the exact binary rational of the given double.
 */
public final class DiscreteGaussian {
    private final BigInteger varNum;
    private final BigInteger varDen;
    private final long t;
    private final Random random;

    /**
     * A sampler for N_Z(0, σ²).
     *
     * @param variance σ² &gt; 0 and finite
     * @param random   the bit source; use {@link java.security.SecureRandom} outside tests
     * @throws IllegalArgumentException if σ² is not finite and &gt; 0
     */
    public DiscreteGaussian(double variance, Random random) {
        if (!(variance > 0) || Double.isInfinite(variance)) {
            throw new IllegalArgumentException("discrete Gaussian variance sigma^2 must be finite and > 0, got " + variance);
        }
        BigDecimal v = new BigDecimal(variance);
        BigInteger num = v.unscaledValue();
        BigInteger den = BigInteger.ONE;
        if (v.scale() > 0) {
            den = BigInteger.TEN.pow(v.scale());
        } else {
            num = num.multiply(BigInteger.TEN.pow(-v.scale()));
        }
        BigInteger g = num.gcd(den);
        this.varNum = num.divide(g);
        this.varDen = den.divide(g);
        this.t = (long) Math.floor(Math.sqrt(variance)) + 1;
        this.random = random;
    }

    /**
     * One draw from N_Z(0, σ²) (CKS Algorithm 3 with t = ⌊σ⌋ + 1).
     *
     * @return an integer distributed exactly as N_Z(0, σ²) given a uniform bit source
     */
    public long sample() {
        BigInteger bt = BigInteger.valueOf(t);
        while (true) {
            long y = discreteLaplace();
            // accept with probability exp(−(|y| − σ²/t)² / (2σ²)) = exp(−(|y|·t·den − num)² / (2·num·den·t²))
            BigInteger a = BigInteger.valueOf(Math.abs(y)).multiply(bt).multiply(varDen).subtract(varNum);
            BigInteger gNum = a.multiply(a);
            BigInteger gDen = BigInteger.TWO.multiply(varNum).multiply(varDen).multiply(bt).multiply(bt);
            if (bernoulliExp(gNum, gDen)) {
                return y;
            }
        }
    }

    /**
     * n independent draws.
     *
     * @param n the number of draws, ≥ 0
     * @return a new array of n draws from N_Z(0, σ²)
     */
    public long[] sample(int n) {
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            out[i] = sample();
        }
        return out;
    }

    /** Discrete Laplace with scale t: P[Y = y] ∝ exp(−|y|/t) (CKS Algorithm 2). */
    private long discreteLaplace() {
        BigInteger bt = BigInteger.valueOf(t);
        while (true) {
            long u = nextLong(t);
            if (!bernoulliExp(BigInteger.valueOf(u), bt)) {
                continue;
            }
            long v = 0;
            while (bernoulliExp(BigInteger.ONE, BigInteger.ONE)) {
                v++;
            }
            long magnitude = u + t * v;
            boolean negative = random.nextBoolean();
            if (negative && magnitude == 0) {
                continue;
            }
            return negative ? -magnitude : magnitude;
        }
    }

    /** Bernoulli(exp(−γ)) for γ = num/den ≥ 0 (CKS Algorithm 1). */
    private boolean bernoulliExp(BigInteger num, BigInteger den) {
        BigInteger[] qr = num.divideAndRemainder(den);
        for (BigInteger i = BigInteger.ZERO; i.compareTo(qr[0]) < 0; i = i.add(BigInteger.ONE)) {
            if (!bernoulliExpAtMostOne(BigInteger.ONE, BigInteger.ONE)) {
                return false;
            }
        }
        return bernoulliExpAtMostOne(qr[1], den);
    }

    /** Bernoulli(exp(−γ)) for γ = num/den ∈ [0, 1]: K = first k with A_k = 0, A_k ~ Bernoulli(γ/k); true iff K is odd. */
    private boolean bernoulliExpAtMostOne(BigInteger num, BigInteger den) {
        long k = 1;
        while (bernoulli(num, den.multiply(BigInteger.valueOf(k)))) {
            k++;
        }
        return (k & 1) == 1;
    }

    /** Bernoulli(num/den), exactly, for 0 ≤ num ≤ den. */
    private boolean bernoulli(BigInteger num, BigInteger den) {
        if (num.signum() == 0) {
            return false;
        }
        BigInteger u;
        do {
            u = new BigInteger(den.bitLength(), random);
        } while (u.compareTo(den) >= 0);
        return u.compareTo(num) < 0;
    }

    private long nextLong(long bound) {
        long r;
        long limit = Long.MAX_VALUE - Long.MAX_VALUE % bound;
        do {
            r = random.nextLong() & Long.MAX_VALUE;
        } while (r >= limit);
        return r % bound;
    }
}
