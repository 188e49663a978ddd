package org.dpdl4j.spark;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InvalidObjectException;
import java.io.NotSerializableException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.ObjectStreamClass;
import java.io.OutputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.broadcast.Broadcast;
import org.dpdl4j.datasets.DatasetCache;
import org.dpdl4j.datasets.Datasets;
import org.dpdl4j.datasets.LabeledData;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * How private data reaches the executors, verified. On the driver every {@link LabeledData} inside a serialised call
 * is replaced by a {@link Handle} that names its SHA-256 and how to get it: a Spark broadcast of the arrays (made once
 * per data set and driver), or, for the full training split of a known dataset, the executor's own dataset cache
 * (the same files the driver verified, loaded the same way). On the executor a handle becomes the data again, and the
 * data is used only if its SHA-256 equals the handle's; a JVM keeps the last few data sets it resolved.
 */
final class DataShipping {
    /** Data sets an executor JVM keeps (the full data, a subset, the parts of propose-test...). */
    private static final int KEPT = 4;
    private static final Map<String, LabeledData> RESOLVED = new LinkedHashMap<>(8, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, LabeledData> eldest) {
            return size() > KEPT;
        }
    };

    private final Function<Payload, Broadcast<Payload>> broadcaster;
    private final Map<LabeledData, Handle> handles = new IdentityHashMap<>();
    private final Map<LabeledData, DatasetRecipe> cached = new IdentityHashMap<>();

    /** @param broadcaster makes a Spark broadcast of a payload (the driver's context) */
    DataShipping(Function<Payload, Broadcast<Payload>> broadcaster) {
        this.broadcaster = broadcaster;
    }

    /** Executors load this data from their own cache (verified against its SHA-256) instead of receiving a broadcast. */
    synchronized void fromCache(LabeledData data, DatasetRecipe recipe) {
        cached.put(data, recipe);
    }

    /**
     * The object serialised with every {@link LabeledData} in it replaced by a handle.
     *
     * @throws IllegalArgumentException if something in it is not serializable (the message names it)
     */
    byte[] serialize(Object o) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new Replacing(bytes)) {
            out.writeObject(o);
        } catch (NotSerializableException e) {
            throw new IllegalArgumentException("cannot send " + o.getClass().getName() + " to Spark executors: "
                    + e.getMessage() + " is not serializable", e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot serialise " + o.getClass().getName(), e);
        }
        return bytes.toByteArray();
    }

    /** Reads back what {@link #serialize} wrote, on an executor, fetching and verifying its data. */
    static Object deserialize(byte[] bytes) {
        try (ObjectInputStream in = new Resolving(new ByteArrayInputStream(bytes))) {
            return in.readObject();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read a dpdl4j call on this executor", e);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("a dpdl4j class is missing on this executor (is the dpdl4j jar on its classpath?)", e);
        }
    }
    /** True if executors load this data from their own cache ({@link #fromCache}). */
    synchronized boolean fromCache(LabeledData data) {
        return cached.containsKey(data);
    }

    /** The handle executors resolve this data by: its recipe if it comes from their cache, else a broadcast (made once). */
    Handle ship(LabeledData data) {
        return handle(data);
    }

    /** Drops this data's handle and destroys its broadcast, if it has one (the run that shipped it has ended). */
    synchronized void forget(LabeledData data) {
        Handle h = handles.remove(data);
        if (h != null && h.broadcast() != null) {
            h.broadcast().destroy();
        }
    }

    private synchronized Handle handle(LabeledData data) {
        return handles.computeIfAbsent(data, d -> {
            Payload p = Payload.of(d);
            DatasetRecipe recipe = cached.get(d);
            return new Handle(p.sha256(), d.size(), recipe, recipe == null ? broadcaster.apply(p) : null);
        });
    }

    /** The data a handle names, from this JVM's memory, the broadcast or the dataset cache, verified. */
    static LabeledData resolve(Handle h) throws IOException {
        synchronized (RESOLVED) {
            LabeledData known = RESOLVED.get(h.sha256());
            if (known != null) {
                return known;
            }
        }
        LabeledData data;
        if (h.recipe() != null) {
            data = h.recipe().load();
        } else {
            data = h.broadcast().value().toData();
        }
        String sha = Payload.of(data).sha256();
        if (!sha.equals(h.sha256())) {
            throw new IOException("the data this executor " + (h.recipe() != null ? "loaded from its cache (" + h.recipe() + ")"
                    : "received") + " has SHA-256 " + sha + ", not the driver's " + h.sha256()
                    + (h.recipe() != null ? ": its dataset cache differs from the driver's" : ""));
        }
        synchronized (RESOLVED) {
            RESOLVED.put(sha, data);
        }
        return data;
    }

    /**
     * A data set as it travels: SHA-256 of its contents, its size (for messages), and either the recipe an executor
     * loads it by or a broadcast of its arrays.
     */
    record Handle(String sha256, int size, DatasetRecipe recipe, Broadcast<Payload> broadcast) implements Serializable {
    }

    /**
     * The full training split of a dataset as {@link Datasets#load} gives it, from the executor's own cache
     * ({@link DatasetCache#root()}: {@code $DPDL4J_DATA}, default {@code ~/.cache/dpdl4j}), whose files the loader
     * verifies by SHA-256 as on the driver.
     *
     * @param name    dataset name ({@value Datasets#KNOWN})
     * @param height  image height
     * @param width   image width
     * @param channels image channels
     * @param seed    the loader's seed (shuffling of folder datasets)
     */
    record DatasetRecipe(String name, int height, int width, int channels, long seed) implements Serializable {
        LabeledData load() throws IOException {
            Path root = DatasetCache.root();
            return Datasets.load(name, root, height, width, channels, seed).train();
        }
    }

    /**
     * The arrays of a {@link LabeledData}, each float32, row-major, with its shape: features (as stored: [n, c·h·w],
     * [n, f, T], …), labels ([n, classes], or [n, outputs, T] for a label per time step) and the feature and label
     * masks ([n, T], or null), so that a sequence run on the cluster reads what a local run reads.
     */
    record Payload(float[] features, long[] featureShape, float[] labels, long[] labelShape, float[] featureMask, long[] featureMaskShape,
                   float[] labelMask, long[] labelMaskShape, int channels, int height, int width) implements Serializable {
        static Payload of(LabeledData d) {
            return new Payload(values(d.features()), d.features().shape(), values(d.labels()), d.labels().shape(), values(d.featureMask()),
                    shape(d.featureMask()), values(d.labelMask()), shape(d.labelMask()), d.channels(), d.height(), d.width());
        }

        private static float[] values(INDArray a) {
            return a == null ? null : a.dup('c').data().asFloat();
        }

        private static long[] shape(INDArray a) {
            return a == null ? null : a.shape();
        }

        private static INDArray array(float[] values, long[] shape) {
            return values == null ? null : Nd4j.create(values, shape, 'c');
        }

        LabeledData toData() {
            return new LabeledData(array(features, featureShape), array(labels, labelShape), channels, height, width,
                    array(featureMask, featureMaskShape), array(labelMask, labelMaskShape));
        }

        /** SHA-256 over the shapes and the IEEE-754 bits of every value of every array (little-endian). */
        String sha256() {
            try {
                MessageDigest md = MessageDigest.getInstance("SHA-256");
                ByteBuffer header = ByteBuffer.allocate(3 * Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
                header.putInt(channels).putInt(height).putInt(width);
                md.update(header.array());
                for (Object[] array : new Object[][]{{featureShape, features}, {labelShape, labels}, {featureMaskShape, featureMask},
                        {labelMaskShape, labelMask}}) {
                    long[] shape = (long[]) array[0];
                    ByteBuffer dims = ByteBuffer.allocate(Integer.BYTES + (shape == null ? 0 : shape.length * Long.BYTES))
                            .order(ByteOrder.LITTLE_ENDIAN);
                    dims.putInt(shape == null ? -1 : shape.length); // an absent mask hashes apart from an empty one
                    for (int i = 0; shape != null && i < shape.length; i++) {
                        dims.putLong(shape[i]);
                    }
                    md.update(dims.array());
                    if (array[1] != null) {
                        update(md, (float[]) array[1]);
                    }
                }
                return HexFormat.of().formatHex(md.digest());
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("SHA-256 is missing from this JVM", e);
            }
        }

        private static void update(MessageDigest md, float[] values) {
            ByteBuffer buf = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
            for (float v : values) {
                if (!buf.hasRemaining()) {
                    md.update(buf.array(), 0, buf.position());
                    buf.clear();
                }
                buf.putFloat(v);
            }
            md.update(buf.array(), 0, buf.position());
        }
    }

    /** Replaces every {@link LabeledData} by its handle. */
    private final class Replacing extends ObjectOutputStream {
        Replacing(OutputStream out) throws IOException {
            super(out);
            enableReplaceObject(true);
        }

        @Override
        protected Object replaceObject(Object obj) {
            return obj instanceof LabeledData d ? handle(d) : obj;
        }
    }

    /** Resolves handles back into data; classes come from the task's class loader (the application's jar). */
    private static final class Resolving extends ObjectInputStream {
        Resolving(InputStream in) throws IOException {
            super(in);
            enableResolveObject(true);
        }

        @Override
        protected Object resolveObject(Object obj) throws IOException {
            if (obj instanceof Handle h) {
                try {
                    return resolve(h);
                } catch (RuntimeException e) {
                    InvalidObjectException io = new InvalidObjectException("cannot get the data of a trial (" + h.size() + " examples)");
                    io.initCause(e);
                    throw io;
                }
            }
            return obj;
        }

        @Override
        protected Class<?> resolveClass(ObjectStreamClass desc) throws IOException, ClassNotFoundException {
            ClassLoader loader = Thread.currentThread().getContextClassLoader();
            if (loader != null) {
                try {
                    return Class.forName(desc.getName(), false, loader);
                } catch (ClassNotFoundException e) {
                    // fall back to the default lookup (primitives, the system loader)
                }
            }
            return super.resolveClass(desc);
        }
    }
}
