/**
 * DP-HYPE across real parties (Liebenow, Peinemann &amp; Mohammadi, DP-HYPE: Distributed Differentially Private
 * Hyperparameter Search, 2025, arXiv:2510.04902, Algorithm 1): a client API a JVM server can embed ({@link org.dpdl4j.federated.DpHypeClient}),
 * a coordinator ({@link org.dpdl4j.federated.DpHypeCoordinator}) that learns only the sum of the
 * clients' noisy vote vectors, and a transport between them
 * ({@link org.dpdl4j.federated.SecureSumTransport}: in-process, or gRPC in
 * {@code org.dpdl4j.federated.grpc}).
 *
 * <h2>Protocol (one session, rounds r = 1, 2, …)</h2>
 * <ol>
 *   <li>Each client draws its noisy vote once: s·v + N_Z(0, σ_c²)^p, v the top-k indicator of its
 *       own losses. It resubmits the same vector in every round of the session.</li>
 *   <li>Keys: each client sends a fresh X25519 public key for round r. The key phase closes when every
 *       active client has sent one, or at the phase timeout with those present (at least n_min); the
 *       coordinator returns the round's key list.</li>
 *   <li>Inputs: each client sends its vector plus its pairwise mask
 *       ({@link org.dpdl4j.secagg.PairwiseMasks}), modulo 2^64. When every key holder has submitted,
 *       the masks cancel and the coordinator adds the vectors to get the exact integer sum.</li>
 *   <li>Dropout: if a key holder does not submit before the phase timeout, the masks cannot cancel and
 *       the round aborts; those who submitted retry in round r + 1 with fresh keys (no mask recovery).
 *       The session fails when fewer than n_min clients remain or after the last allowed round.</li>
 * </ol>
 *
 * <h2>What the coordinator learns</h2>
 * In a completed round, only Σ_u (s·v_u + z_u) over the round's participants, their ids and count.
 * From an aborted round it holds masked vectors each of which is uniform on Z_{2^64}^p to anyone who
 * lacks a pairwise secret of that client. Because a client resubmits the same vector, even a dropped
 * client that reveals its secrets to the coordinator only lets it unmask the survivors' sum, which the
 * next round reveals anyway. Threat model: an honest-but-curious coordinator and authenticated
 * channels (deploy gRPC with TLS and client certificates). An actively malicious coordinator that
 * declares a dropout falsely, or substitutes public keys, could learn a single client's noisy vote,
 * whose only protection is that client's own N_Z(0, σ_c²): Bonawitz et al.'s signatures and
 * consistency checks, which prevent this, are not implemented.
 *
 * @serial exclude
 */
package org.dpdl4j.federated;
