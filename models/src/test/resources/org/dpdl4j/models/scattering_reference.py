#!/usr/bin/env python3
"""Independent numpy reference for org.dpdl4j.models.Scattering2D (Kymatio's Scattering2D algorithm, with 2*pi in
the Gabor normalisation where Kymatio writes 2*3.1415). Written for dpdl4j's tests; numpy's FFT, not JTransforms.

    python3 scattering_reference.py > scattering_reference.txt      (Debian's python3-numpy)

Output: for each case a header line "case H W J L" and then the K*floor(H/2^J)*floor(W/2^J) coefficients, one per line,
coefficient-major, of the test image image(H, W) below.
"""
import numpy as np


def image(h, w):
    i = np.arange(h)[:, None]
    j = np.arange(w)[None, :]
    return ((i * 7 + j * 13) % 17) / 16.0 + 0.5 * np.sin(0.3 * i) * np.cos(0.2 * j)


def gabor(m, n, sigma, theta, xi, slant):
    c, s = np.cos(theta), np.sin(theta)
    a = (c * c + slant * slant * s * s) / (2 * sigma * sigma)
    b = c * s * (1 - slant * slant) / (2 * sigma * sigma)
    d = (s * s + slant * slant * c * c) / (2 * sigma * sigma)
    g = np.zeros((m, n), complex)
    i = np.arange(m, dtype=float)[:, None]
    j = np.arange(n, dtype=float)[None, :]
    for ex in range(-2, 3):
        for ey in range(-2, 3):
            x = i + ex * m
            y = j + ey * n
            g += np.exp(-(a * x * x + 2 * b * x * y + d * y * y) + 1j * xi * (x * c + y * s))
    return g * slant / (2 * np.pi * sigma * sigma)


def morlet(m, n, sigma, theta, xi, slant):
    wave = gabor(m, n, sigma, theta, xi, slant)
    envelope = gabor(m, n, sigma, theta, 0.0, slant)
    return wave - (wave.sum() / envelope.sum()) * envelope


def periodize(f, r):
    m, n = f.shape
    k = 2 ** r
    f = f.copy()
    if r > 0:
        f[m // (2 * k): m // (2 * k) + m - m // k, :] = 0
        f[:, n // (2 * k): n // (2 * k) + n - n // k] = 0
    return f.reshape(k, m // k, k, n // k).sum(axis=(0, 2))


def subsample(x, k):
    m, n = x.shape
    return x.reshape(k, m // k, k, n // k).mean(axis=(0, 2))


def scattering(x, J, L):
    h, w = x.shape
    m = ((h + 2 ** J) // 2 ** J + 1) * 2 ** J
    n = ((w + 2 ** J) // 2 ** J + 1) * 2 ** J
    xp = np.pad(x, (((m - h) // 2, (m - h + 1) // 2), ((n - w) // 2, (n - w + 1) // 2)), mode='reflect')
    phi0 = np.real(np.fft.fft2(gabor(m, n, 0.8 * 2 ** (J - 1), 0.0, 0.0, 1.0)))
    phi = [periodize(phi0, r) for r in range(J)]
    psi = []
    for j in range(J):
        for t in range(L):
            theta = (int(L - L / 2 - 1) - t) * np.pi / L
            f = np.real(np.fft.fft2(morlet(m, n, 0.8 * 2 ** j, theta, 0.75 * np.pi / 2 ** j, 4.0 / L)))
            psi.append((j, [periodize(f, r) for r in range(J)]))
    unpad = lambda a: a[1:-1, 1:-1]
    X = np.fft.fft2(xp)
    out = [unpad(np.real(np.fft.ifft2(subsample(X * phi[0], 2 ** J))))]
    second = []
    for j1, p1 in psi:
        U = subsample(X * p1[0], 2 ** j1)
        U = np.fft.fft2(np.abs(np.fft.ifft2(U)))
        out.append(unpad(np.real(np.fft.ifft2(subsample(U * phi[j1], 2 ** (J - j1))))))
        for j2, p2 in psi:
            if j2 <= j1:
                continue
            V = subsample(U * p2[j1], 2 ** (j2 - j1))
            V = np.fft.fft2(np.abs(np.fft.ifft2(V)))
            second.append(unpad(np.real(np.fft.ifft2(subsample(V * phi[j2], 2 ** (J - j2))))))
    return np.stack(out + second)


if __name__ == '__main__':
    for h, w, J, L in [(28, 28, 2, 8), (20, 24, 2, 8), (24, 20, 3, 4)]:
        s = scattering(image(h, w), J, L)
        print('case', h, w, J, L)
        for v in s.ravel():
            print(repr(float(v)))
