package org.dpdl4j.federated;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.dpdl4j.accounting.RdpAccountant;
import org.dpdl4j.federated.Messages.Hello;
import org.dpdl4j.federated.Messages.KeyAdvertisement;
import org.dpdl4j.federated.Messages.MaskedInput;
import org.dpdl4j.federated.Messages.PeerKey;
import org.dpdl4j.federated.Messages.RoundKeys;
import org.dpdl4j.federated.Messages.RoundOutcome;
import org.dpdl4j.federated.Messages.SessionInfo;
import org.dpdl4j.federated.ProtocolException.Reason;
import org.dpdl4j.secagg.PairwiseMasks;
import org.dpdl4j.accounting.DpHypeVoting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class DpHypeProtocolTest {
    private static final int P = 12;
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    /** Records every message the coordinator receives, as the network would carry it. */
    static final class Recording implements SecureSumTransport {
        final SecureSumTransport inner;
        final List<Object> received = new CopyOnWriteArrayList<>();

        Recording(SecureSumTransport inner) {
            this.inner = inner;
        }

        @Override
        public SessionInfo hello(Hello hello) {
            received.add(hello);
            return inner.hello(hello);
        }

        @Override
        public RoundKeys advertise(KeyAdvertisement a) {
            received.add(a);
            return inner.advertise(a);
        }

        @Override
        public RoundOutcome submit(MaskedInput m) {
            received.add(new MaskedInput(m.session(), m.round(), m.clientId(), m.maskedVector().clone()));
            return inner.submit(m);
        }
    }

    private static double[] losses(int client) {
        Random r = new Random(100 + client);
        double[] l = new double[P];
        for (int j = 0; j < P; j++) {
            l[j] = (j == 4 ? 0 : 1) + 0.5 * r.nextDouble();
        }
        return l;
    }

    private static DpHypeParameters parameters(int n, int minClients) {
        return DpHypeParameters.calibrate(P, 3, n, minClients, DpHypeParameters.DEFAULT_SCALE, 1, 1e-5);
    }

    private Future<RoundOutcome> client(int id, DpHypeParameters params, SecureSumTransport transport) {
        return pool.submit(() -> new DpHypeClient(id, params, transport, new Random(id)).vote(losses(id)));
    }

    private static long[] plainSum(DpHypeParameters params, int... ids) {
        long[] sum = new long[P];
        for (int id : ids) {
            long[] v = DpHypeClient.encode(losses(id), params, new Random(id));
            for (int j = 0; j < P; j++) {
                sum[j] += v[j];
            }
        }
        return sum;
    }

    /** A client driven message by message, to send bad and late messages. */
    private static final class Manual {
        final int id;
        final SecureSumTransport transport;
        final KeyPair keys = PairwiseMasks.newKeyPair();
        SessionInfo info;

        Manual(int id, SecureSumTransport transport) {
            this.id = id;
            this.transport = transport;
            this.info = transport.hello(new Hello(id));
        }

        KeyAdvertisement advertisement(long round) {
            return new KeyAdvertisement(info.session(), round, id, PairwiseMasks.encodePublicKey(keys.getPublic()));
        }

        MaskedInput input(RoundKeys roundKeys, long[] vector) {
            Map<Integer, byte[]> peers = new HashMap<>();
            for (PeerKey k : roundKeys.keys()) {
                peers.put(k.clientId(), k.publicKey());
            }
            long[] mask = PairwiseMasks.mask(id, keys.getPrivate(), peers, info.session().getBytes(StandardCharsets.UTF_8), roundKeys.round(), P);
            long[] masked = new long[P];
            for (int j = 0; j < P; j++) {
                masked[j] = vector[j] + mask[j];
            }
            return new MaskedInput(info.session(), roundKeys.round(), id, masked);
        }
    }

    private static Reason refused(Runnable call) {
        return assertThrows(ProtocolException.class, call::run).reason();
    }

    @Test
    void theRevealedSumIsExactlyThePlainSumAndNoUnmaskedVectorReachesTheCoordinator() throws Exception {
        DpHypeParameters params = parameters(5, 5);
        DpHypeCoordinator coordinator = new DpHypeCoordinator(params, List.of(1, 2, 3, 4, 5), Duration.ofSeconds(30), 3);
        Recording recording = new Recording(new InProcessTransport(coordinator));
        List<Future<RoundOutcome>> outcomes = new ArrayList<>();
        for (int id = 1; id <= 5; id++) {
            outcomes.add(client(id, params, recording));
        }
        DpHypeCoordinator.Result result = coordinator.awaitResult(Duration.ofSeconds(30));
        long[] expected = plainSum(params, 1, 2, 3, 4, 5);
        assertArrayEquals(expected, result.sum());
        assertEquals(List.of(1, 2, 3, 4, 5), result.participants());
        assertEquals(1, result.rounds());
        int argmax = IntStream.range(0, P).reduce((a, b) -> expected[b] > expected[a] ? b : a).getAsInt();
        assertEquals(argmax, result.winner());
        for (Future<RoundOutcome> f : outcomes) {
            RoundOutcome o = f.get(30, TimeUnit.SECONDS);
            assertTrue(o.done());
            assertArrayEquals(expected, o.sum());
            assertEquals(argmax, o.winner());
        }
        int inputs = 0;
        for (Object m : recording.received) {
            if (m instanceof MaskedInput in) {
                inputs++;
                long[] plain = DpHypeClient.encode(losses(in.clientId()), params, new Random(in.clientId()));
                for (int j = 0; j < P; j++) {
                    assertNotEquals(plain[j], in.maskedVector()[j], "client " + in.clientId() + " coordinate " + j + " reached the coordinator unmasked");
                    assertTrue(Math.abs(in.maskedVector()[j]) > 1L << 40, "a masked word should be uniform on Z_2^64, got " + in.maskedVector()[j]);
                }
            }
        }
        assertEquals(5, inputs);
    }

    @Test
    void badMessagesAreRefusedAndTheRoundStaysConsistent() throws Exception {
        DpHypeParameters params = parameters(4, 3);
        DpHypeCoordinator coordinator = new DpHypeCoordinator(params, List.of(1, 2, 3, 4), Duration.ofSeconds(2), 3);
        InProcessTransport transport = new InProcessTransport(coordinator);
        assertEquals(Reason.UNKNOWN_CLIENT, refused(() -> transport.hello(new Hello(99))));
        Manual m = new Manual(3, transport);
        KeyAdvertisement good = m.advertisement(1);
        assertEquals(Reason.WRONG_SESSION, refused(() -> transport.advertise(new KeyAdvertisement("forged", 1, 3, good.publicKey()))));
        assertEquals(Reason.WRONG_LENGTH, refused(() -> transport.advertise(new KeyAdvertisement(good.session(), 1, 3, new byte[31]))));
        assertEquals(Reason.UNKNOWN_CLIENT, refused(() -> transport.advertise(new KeyAdvertisement(good.session(), 1, 99, good.publicKey()))));
        assertEquals(Reason.OUT_OF_ORDER, refused(() -> transport.advertise(m.advertisement(2))));
        assertEquals(Reason.OUT_OF_ORDER, refused(() -> transport.submit(new MaskedInput(good.session(), 1, 3, new long[P]))));

        Future<RoundOutcome> c1 = client(1, params, transport);
        Future<RoundOutcome> c2 = client(2, params, transport);
        RoundKeys keys = pool.submit(() -> transport.advertise(good)).get(30, TimeUnit.SECONDS); // closes at the timeout with 1, 2, 3
        assertEquals(List.of(1, 2, 3), keys.keys().stream().map(PeerKey::clientId).toList());
        assertEquals(Reason.REPLAY, refused(() -> transport.advertise(good)));
        assertEquals(Reason.LATE_JOINER, refused(() -> new Manual(4, transport).transport.advertise(new Manual(4, transport).advertisement(1))));
        assertEquals(Reason.LATE_JOINER, refused(() -> transport.submit(new MaskedInput(good.session(), 1, 4, new long[P]))));
        long[] vector = DpHypeClient.encode(losses(3), params, new Random(3));
        assertEquals(Reason.WRONG_LENGTH, refused(() -> transport.submit(new MaskedInput(good.session(), 1, 3, new long[P + 1]))));
        MaskedInput input = m.input(keys, vector);
        RoundOutcome o3 = transport.submit(input);
        assertEquals(Reason.REPLAY, refused(() -> transport.submit(input)));
        assertEquals(Reason.REPLAY, refused(() -> transport.advertise(good)));

        long[] expected = plainSum(params, 1, 2, 3);
        assertArrayEquals(expected, o3.sum());
        assertArrayEquals(expected, c1.get(30, TimeUnit.SECONDS).sum());
        assertArrayEquals(expected, c2.get(30, TimeUnit.SECONDS).sum());
        assertArrayEquals(expected, coordinator.awaitResult(Duration.ofSeconds(5)).sum());
    }

    @Test
    void aDropoutAbortsTheRoundAndTheSurvivorsRetryWithFreshKeys() throws Exception {
        DpHypeParameters params = parameters(4, 3);
        DpHypeCoordinator coordinator = new DpHypeCoordinator(params, List.of(1, 2, 3, 4), Duration.ofSeconds(2), 3);
        Recording recording = new Recording(new InProcessTransport(coordinator));
        Manual dropper = new Manual(4, recording);
        Future<RoundKeys> dropperKeys = pool.submit(() -> recording.advertise(dropper.advertisement(1)));
        List<Future<RoundOutcome>> outcomes = List.of(client(1, params, recording), client(2, params, recording), client(3, params, recording));
        assertEquals(4, dropperKeys.get(30, TimeUnit.SECONDS).keys().size()); // then client 4 never submits
        DpHypeCoordinator.Result result = coordinator.awaitResult(Duration.ofSeconds(30));
        assertEquals(2, result.rounds());
        assertEquals(List.of(1, 2, 3), result.participants());
        assertArrayEquals(plainSum(params, 1, 2, 3), result.sum());
        for (Future<RoundOutcome> f : outcomes) {
            assertEquals(2, f.get(30, TimeUnit.SECONDS).round());
        }
        // each survivor sent two keys (one per round), all distinct
        long distinctKeys = recording.received.stream().filter(o -> o instanceof KeyAdvertisement a && a.clientId() != 4)
                .map(o -> java.util.HexFormat.of().formatHex(((KeyAdvertisement) o).publicKey())).distinct().count();
        assertEquals(6, distinctKeys);
        assertEquals(Reason.REPLAY, refused(() -> recording.advertise(dropper.advertisement(1))));
        assertEquals(Reason.LATE_JOINER, refused(() -> recording.advertise(dropper.advertisement(2)))); // dropped, so not part of round 2
    }

    @Test
    void tooFewSurvivorsFailTheSessionForEveryone() throws Exception {
        DpHypeParameters params = parameters(3, 3);
        DpHypeCoordinator coordinator = new DpHypeCoordinator(params, List.of(1, 2, 3), Duration.ofSeconds(1), 3);
        InProcessTransport transport = new InProcessTransport(coordinator);
        Manual dropper = new Manual(3, transport);
        pool.submit(() -> transport.advertise(dropper.advertisement(1)));
        Future<RoundOutcome> c1 = client(1, params, transport);
        Future<RoundOutcome> c2 = client(2, params, transport);
        ProtocolException e = assertThrows(ProtocolException.class, () -> coordinator.awaitResult(Duration.ofSeconds(30)));
        assertEquals(Reason.SESSION_FAILED, e.reason());
        assertTrue(e.getMessage().contains("n_min = 3"), e.getMessage());
        for (Future<RoundOutcome> f : List.of(c1, c2)) {
            Exception x = assertThrows(Exception.class, () -> f.get(30, TimeUnit.SECONDS));
            assertEquals(Reason.SESSION_FAILED, ((ProtocolException) x.getCause()).reason());
        }
    }

    @Test
    void aClientRefusesACoordinatorWithOtherParametersBeforeSendingAnything() {
        DpHypeParameters params = parameters(3, 3);
        DpHypeParameters weaker = new DpHypeParameters(P, 3, params.scale(), params.localSigma() / 2, 3, 3);
        DpHypeCoordinator coordinator = new DpHypeCoordinator(weaker, List.of(1, 2, 3), Duration.ofSeconds(1), 1);
        Recording recording = new Recording(new InProcessTransport(coordinator));
        ProtocolException e = assertThrows(ProtocolException.class,
                () -> new DpHypeClient(1, params, recording, new Random(1)).vote(losses(1)));
        assertEquals(Reason.PARAMETER_MISMATCH, e.reason());
        assertEquals(1, recording.received.size()); // only the hello
        assertFalse(recording.received.get(0) instanceof MaskedInput);
    }

    @Test
    void calibratedParametersMeetTheTargetAndApproachTheContinuousSigma() {
        for (double epsilon : new double[] {0.25, 1, 3}) {
            DpHypeParameters params = DpHypeParameters.calibrate(100, 5, 50, 50, DpHypeParameters.DEFAULT_SCALE, epsilon, 1e-5);
            org.dpdl4j.accounting.PrivacyAccountant accountant = DpHypeVoting.accountant();
            assertTrue(accountant.epsilon(params.event(), 1e-5) <= epsilon);
            DpHypeParameters less = new DpHypeParameters(100, 5, params.scale(), params.localSigma() - 0.01, 50, 50);
            assertTrue(accountant.epsilon(less.event(), 1e-5) > epsilon);
            // with s = 2^16 the distributed discrete Gaussian is the continuous Gaussian to 1e-4 relative: same σ as Theorem IV.1
            assertEquals(DpHypeVoting.noiseMultiplier(5, epsilon, 1e-5), params.summedNoiseInVotes(), 2e-4 * params.summedNoiseInVotes() + 1e-4);
        }
        // a coarse scale pays for discreteness: σ in votes is larger
        DpHypeParameters coarse = DpHypeParameters.calibrate(100, 5, 250, 250, 1, 1, 1e-5);
        assertTrue(coarse.summedNoiseInVotes() > DpHypeVoting.noiseMultiplier(5, 1, 1e-5));
    }
}
