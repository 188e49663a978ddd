package org.dpdl4j.datasets;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemLoopException;
import java.nio.file.FileVisitOption;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.datavec.image.loader.NativeImageLoader;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * A user's own images: a directory with one sub-directory per class (the sub-directory's name is the label, classes
 * sorted by name), each image decoded by DataVec's {@link NativeImageLoader}, resized to height×width with the given
 * channel count, pixels scaled to [0, 1]. If the directory has {@code train/} and {@code test/} sub-directories they are
 * used as the split (a test class that {@code train/} lacks is refused); otherwise each image is held out for the test
 * set with probability {@link #TEST_FRACTION} = 0.2, decided by a keyed hash of the seed, its class and its bytes alone
 * ({@link Splits#byKey}): adding or removing one image moves no other image between the parts, so two folders that differ
 * by one image train on sets that differ by at most that image (a seeded permutation of all the images would move a
 * third of them). The test set's size is random (binomial).
 *
 * <p>Differential privacy counts examples, so each image counts once: every file's SHA-256 is taken, and a file whose
 * bytes equal an earlier one's (a copy, a hard or symbolic link) is counted once, with a warning naming both (the same
 * bytes under two classes are refused: which label would count?); a test image whose bytes are a training image's is
 * left out of the test set. Directory links are followed only inside the folder: a link that leaves it, or that leads
 * back into a directory above it (a loop), is refused by name. Files are read in the order of their paths, so the same
 * folder gives the same data set, identified by {@link TrainTest#digest()}: the SHA-256 of every kept image's split,
 * class and content.
 *
 * <p>Needs DataVec on the classpath: {@code org.datavec:datavec-data-image} (version 1.0.0-M2.1) is an optional
 * dependency of {@code dpdl4j-datasets}, left out of an application that does not read image folders (it brings
 * OpenCV and JavaCV).
 */
public final class ImageFolder {
    /** The largest height or width an image is resized to. */
    public static final int MAX_SIDE = 4096;
    /** The probability that an image of a folder without {@code train/} and {@code test/} is held out for the test set. */
    public static final double TEST_FRACTION = 0.2;
    /** DataVec's image decoder, an optional dependency: loaded only when a folder is read (see {@link #requireDataVec}). */
    private static final String DATAVEC_IMAGE = "org.datavec:datavec-data-image:1.0.0-M2.1";

    /** The file extensions DataVec decodes (DataVec's own list, read when a folder is first read). */
    private static final class Formats {
        static final Set<String> EXTENSIONS = Set.of(NativeImageLoader.ALLOWED_FORMATS);
    }

    /**
     * Refuses, naming the artifact, when DataVec's image loader is not on the classpath (it is optional in
     * {@code dpdl4j-datasets}, so that an application without image folders does not carry OpenCV).
     */
    private static void requireDataVec() {
        try {
            Class.forName("org.datavec.image.loader.NativeImageLoader", false, ImageFolder.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            throw new IllegalStateException("reading an image folder needs DataVec's image loader, which is not on the classpath: "
                    + "add the dependency " + DATAVEC_IMAGE + " (an optional dependency of dpdl4j-datasets; it brings OpenCV's "
                    + "native libraries for the platform, as nd4j-native does)", e);
        }
    }

    private ImageFolder() {
    }

    /**
     * Loads a folder without reporting warnings (see {@link #load(Path, int, int, int, long, Consumer)}).
     *
     * @param directory class-per-sub-directory root (or a directory with {@code train/} and {@code test/} holding them)
     * @param height    target height in pixels, in [1, {@link #MAX_SIDE}]
     * @param width     target width in pixels, in [1, {@link #MAX_SIDE}]
     * @param channels  1 (grey) or 3 (colour)
     * @param seed      key of the per-image test split (unused when the folder has {@code train/} and {@code test/})
     * @return the training and test images as float32 [n, c·h·w] (NCHW) in [0, 1] with one-hot labels, named
     *         {@code folder:DIRECTORY}, with the folder's SHA-256 digest
     * @throws IllegalArgumentException on a size or channel count outside the ranges
     * @throws InvalidDatasetException  if the folder is missing, malformed, or holds an image that cannot be decoded
     * @throws IOException              if a file cannot be read
     */
    public static TrainTest load(Path directory, int height, int width, int channels, long seed) throws IOException {
        return load(directory, height, width, channels, seed, w -> { });
    }

    /**
     * Loads a folder's images, all decoded into memory, reporting the duplicate images left out.
     *
     * @param directory class-per-sub-directory root (or a directory with {@code train/} and {@code test/} holding them)
     * @param height    target height in pixels, in [1, {@link #MAX_SIDE}]
     * @param width     target width in pixels, in [1, {@link #MAX_SIDE}]
     * @param channels  1 (grey) or 3 (colour)
     * @param seed      key of the per-image test split (unused when the folder has {@code train/} and {@code test/})
     * @param warnings  receives one sentence per duplicate image left out
     * @return the training and test images as float32 [n, c·h·w] (NCHW) in [0, 1] with one-hot labels, named
     *         {@code folder:DIRECTORY}, with the folder's SHA-256 digest
     * @throws IllegalArgumentException on a size or channel count outside the ranges
     * @throws InvalidDatasetException  if the directory is missing, holds fewer than 2 classes or no images, has a directory
     *                                  link that leaves it or loops, the same image under two classes, an image that cannot
     *                                  be decoded, or more pixels than ND4J may hold
     * @throws IOException              if a file or directory cannot be read
     */
    public static TrainTest load(Path directory, int height, int width, int channels, long seed, Consumer<String> warnings)
            throws IOException {
        Index index = index(directory, height, width, channels, seed, warnings);
        checkMemory(directory, index.train.size() + index.test.size(), height, width, channels);
        return inMemory(directory, index, height, width, channels);
    }

    /** The indexed folder with all its images decoded. */
    private static TrainTest inMemory(Path directory, Index index, int height, int width, int channels) throws IOException {
        return new TrainTest(index.name, decode(directory, index.train, index.classes, height, width, channels),
                decode(directory, index.test, index.classes, height, width, channels), index.digest);
    }

    /**
     * {@link #load(Path, int, int, int, long, Consumer)} with the training images left on disk: the folder is indexed
     * (every file's SHA-256, as {@code load} does, so the data set and its {@link TrainTest#digest()} are the same),
     * the test images are decoded into memory, and the training images are decoded when they are read
     * ({@link TrainTest#trainExamples()}: only each step's Poisson batch, on several threads, each file's bytes checked
     * against its SHA-256 first). The same seed trains bit-identically as from {@code load}'s data.
     *
     * @param directory class-per-sub-directory root (or a directory with {@code train/} and {@code test/} holding them)
     * @param height    target height in pixels, in [1, {@link #MAX_SIDE}]
     * @param width     target width in pixels, in [1, {@link #MAX_SIDE}]
     * @param channels  1 (grey) or 3 (colour)
     * @param seed      key of the per-image test split (unused when the folder has {@code train/} and {@code test/})
     * @param warnings  receives one sentence per duplicate image left out
     * @return the test images in memory, as {@code load} gives them, and the training images read by index (float32
     *         [k, c·h·w] per read), with the folder's SHA-256 digest
     * @throws IllegalArgumentException as {@code load}
     * @throws InvalidDatasetException  as {@code load}, for the test images; a training image that changed since the folder
     *                                  was indexed is refused when it is read, and one that cannot be decoded is read as
     *                                  NaN pixels, so that DP-SGD gives it factor 0 (it adds nothing) rather than stop a
     *                                  run that was charged
     * @throws IOException              if a file or directory cannot be read
     */
    public static TrainTest open(Path directory, int height, int width, int channels, long seed, Consumer<String> warnings)
            throws IOException {
        return onDisk(directory, index(directory, height, width, channels, seed, warnings), height, width, channels);
    }

    /** The indexed folder with its test images decoded and its training images read by index. */
    private static TrainTest onDisk(Path directory, Index index, int height, int width, int channels) throws IOException {
        checkMemory(directory, index.test.size(), height, width, channels);
        return new TrainTest(index.name, null, decode(directory, index.test, index.classes, height, width, channels), index.digest,
                new Images(directory, index.train, index.classes, height, width, channels));
    }

    /**
     * {@link #load(Path, int, int, int, long, Consumer)} when all the images, decoded, fit (half of what ND4J may
     * allocate, where {@code load} refuses a folder), else {@link #open}: the folder is indexed once either way.
     *
     * @param directory class-per-sub-directory root (or a directory with {@code train/} and {@code test/} holding them)
     * @param height    target height in pixels, in [1, {@link #MAX_SIDE}]
     * @param width     target width in pixels, in [1, {@link #MAX_SIDE}]
     * @param channels  1 (grey) or 3 (colour)
     * @param seed      key of the per-image test split (unused when the folder has {@code train/} and {@code test/})
     * @param warnings  receives one sentence per duplicate image left out
     * @return the data set as {@code load} gives it, or as {@code open} gives it when it does not fit
     * @throws IllegalArgumentException as {@code load}
     * @throws InvalidDatasetException  as {@code open}
     * @throws IOException              if a file or directory cannot be read
     */
    public static TrainTest loadOrOpen(Path directory, int height, int width, int channels, long seed, Consumer<String> warnings)
            throws IOException {
        Index index = index(directory, height, width, channels, seed, warnings);
        if (fits(index.train.size() + index.test.size(), height, width, channels)) {
            return inMemory(directory, index, height, width, channels);
        }
        return onDisk(directory, index, height, width, channels);
    }

    /** A folder's images, split, with the data set's digest. */
    private record Index(String name, List<Image> train, List<Image> test, int classes, String digest) {
    }

    private static Index index(Path directory, int height, int width, int channels, long seed, Consumer<String> warnings)
            throws IOException {
        requireDataVec();
        if (height < 1 || width < 1 || height > MAX_SIDE || width > MAX_SIDE) {
            throw new IllegalArgumentException("image height and width must be in [1, " + MAX_SIDE + "], got " + height + "x" + width);
        }
        if (channels != 1 && channels != 3) {
            throw new IllegalArgumentException("channels must be 1 or 3, got " + channels);
        }
        if (Files.isRegularFile(directory)) {
            throw new InvalidDatasetException("image folder " + directory + " is a file: give a directory with one sub-directory "
                    + "per class (or train/ and test/ with class sub-directories)");
        }
        if (!Files.isDirectory(directory)) {
            throw new InvalidDatasetException("image folder " + directory + " does not exist");
        }
        Path root = directory.toRealPath();
        Path train = directory.resolve("train");
        Path test = directory.resolve("test");
        String name = "folder:" + directory;
        Map<String, String> seen = new LinkedHashMap<>(); // SHA-256 -> the first file with those bytes
        Map<String, String> labelOf = new LinkedHashMap<>(); // SHA-256 -> its class
        List<String> identity = new ArrayList<>();
        if (Files.isDirectory(train) && Files.isDirectory(test)) {
            List<String> classes = classes(train);
            List<String> testClasses = classes(test);
            for (String c : testClasses) {
                if (!classes.contains(c)) {
                    throw new InvalidDatasetException("image folder " + directory + ": class '" + c + "' is in test/ but not in "
                            + "train/ (" + String.join(", ", classes) + "): a model trained without it cannot be scored on it; "
                            + "add its training images or remove it from test/");
                }
            }
            List<Image> trainImages = list(root, train, classes, seen, labelOf, warnings, null);
            List<Image> testImages = list(root, test, classes, seen, labelOf, warnings, "training");
            trainImages.forEach(i -> identity.add("train " + i.label + " " + i.sha256));
            testImages.forEach(i -> identity.add("test " + i.label + " " + i.sha256));
            return new Index(name, trainImages, testImages, classes.size(), digest(identity, height, width, channels));
        }
        List<String> classes = classes(directory);
        List<Image> images = list(root, directory, classes, seen, labelOf, warnings, null);
        // each image's own part, from its class and bytes: one image added or removed moves no other (a permutation would)
        int[][] parts = Splits.byKey(images.stream().map(i -> i.label + " " + i.sha256).toList(), TEST_FRACTION, seed);
        for (int[] part : parts) { // the digest names each image's part: another seed's split is another data set
            String which = part == parts[0] ? "train " : "test ";
            java.util.Arrays.stream(part).forEach(k -> identity.add(which + images.get(k).label + " " + images.get(k).sha256));
        }
        return new Index(name, Arrays.stream(parts[0]).mapToObj(images::get).toList(),
                Arrays.stream(parts[1]).mapToObj(images::get).toList(), classes.size(), digest(identity, height, width, channels));
    }

    /** One image file: its path, class index and SHA-256. */
    private record Image(Path file, int label, String sha256) {
    }

    private static List<String> classes(Path dir) throws IOException {
        List<String> classes = new ArrayList<>();
        try (var s = Files.list(dir)) {
            s.filter(Files::isDirectory).map(p -> p.getFileName().toString()).sorted().forEach(classes::add);
        }
        if (classes.size() < 2) {
            throw new InvalidDatasetException("image folder " + dir + " must have at least 2 class sub-directories, found "
                    + classes);
        }
        return classes;
    }

    /**
     * The images under {@code dir}'s class directories, in path order, each file once by content. With {@code
     * dropIfSeenIn} (the test split), an image already seen (in training) is left out with a warning.
     */
    private static List<Image> list(Path root, Path dir, List<String> classes, Map<String, String> seen, Map<String, String> labelOf,
                                    Consumer<String> warnings, String dropIfSeenIn) throws IOException {
        List<Image> images = new ArrayList<>();
        int firstOfSplit = seen.size();
        Set<String> earlier = Set.copyOf(seen.keySet());
        for (int c = 0; c < classes.size(); c++) {
            String cls = classes.get(c);
            if (!Files.isDirectory(dir.resolve(cls))) { // test/ may lack a class of train/
                continue;
            }
            for (Path f : files(root, dir.resolve(cls))) {
                String sha = Sha256.hex(Files.readAllBytes(f));
                String first = seen.get(sha);
                if (first != null) {
                    if (!labelOf.get(sha).equals(cls)) {
                        throw new InvalidDatasetException("image folder " + root + ": " + f + " (class '" + cls + "') has the same "
                                + "bytes as " + first + " (class '" + labelOf.get(sha) + "'): the same image under two classes; "
                                + "remove one of them");
                    }
                    warnings.accept(dropIfSeenIn != null && earlier.contains(sha)
                            ? "image " + f + " is left out of the test set: it has the same bytes as the " + dropIfSeenIn + " image "
                            + first
                            : "image " + f + " has the same bytes as " + first + " and is counted once (privacy counts examples, "
                            + "and a copy is the same example)");
                    continue;
                }
                seen.put(sha, f.toString());
                labelOf.put(sha, cls);
                images.add(new Image(f, c, sha));
            }
        }
        if (images.isEmpty() && seen.size() == firstOfSplit) {
            throw new InvalidDatasetException("image folder " + dir + " holds no images (" + String.join(", ",
                    new java.util.TreeSet<>(Formats.EXTENSIONS)) + ")");
        }
        return images;
    }

    /**
     * The image files under {@code classDir} in path order, following directory links only inside {@code root}; a link
     * that leaves it or loops is refused.
     */
    private static List<Path> files(Path root, Path classDir) throws IOException {
        TreeMap<String, Path> found = new TreeMap<>();
        Files.walkFileTree(classDir, EnumSet.of(FileVisitOption.FOLLOW_LINKS), Integer.MAX_VALUE, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) throws IOException {
                Path real = d.toRealPath();
                if (!real.startsWith(root)) {
                    throw new InvalidDatasetException("image folder " + root + ": " + d + " leads to " + real + ", outside the "
                            + "folder; dpdl4j follows directory links only inside it (copy the images in, or remove the link)");
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes attrs) {
                String n = f.getFileName().toString();
                int dot = n.lastIndexOf('.');
                if (attrs.isRegularFile() && dot > 0 && Formats.EXTENSIONS.contains(n.substring(dot + 1).toLowerCase(Locale.ROOT))) {
                    found.put(classDir.relativize(f).toString(), f);
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path f, IOException e) throws IOException {
                if (e instanceof FileSystemLoopException) {
                    throw new InvalidDatasetException("image folder " + root + ": the directory link " + f + " leads back to "
                            + f.toRealPath() + ", a directory it is in (a loop that would count its images again and again); "
                            + "remove the link");
                }
                if (Files.isSymbolicLink(f)) { // a dangling link is no image
                    return FileVisitResult.CONTINUE;
                }
                throw e;
            }
        });
        return List.copyOf(found.values());
    }

    /** Refuses a folder whose decoded pixels (float32) would not fit in what ND4J may allocate. */
    private static void checkMemory(Path dir, long images, int h, int w, int c) throws InvalidDatasetException {
        long bytes = images * h * w * c * 4L;
        long limit = org.bytedeco.javacpp.Pointer.maxBytes();
        if (!fits(images, h, w, c)) {
            throw new InvalidDatasetException(String.format("image folder %s: %d images at %dx%dx%d take %.3g GB as float32, more "
                    + "than half of the %.3g GB ND4J may allocate (-Dorg.bytedeco.javacpp.maxbytes): choose a smaller --image-size (train "
                    + "decodes the training images of a folder this large when it reads them; data pack packs them into shards)",
                    dir, images, h, w, c, bytes / 1e9, limit / 1e9));
        }
    }

    /** Whether the images, decoded as float32, take at most half of what ND4J may allocate. */
    private static boolean fits(long images, int h, int w, int c) {
        long limit = org.bytedeco.javacpp.Pointer.maxBytes();
        return limit <= 0 || images * h * w * c * 4L <= limit / 2;
    }

    private static LabeledData decode(Path dir, List<Image> images, int classes, int h, int w, int c) throws IOException {
        NativeImageLoader loader = new NativeImageLoader(h, w, c);
        INDArray features = Nd4j.create(DataType.FLOAT, images.size(), (long) c * h * w);
        INDArray labels = Nd4j.create(DataType.FLOAT, images.size(), classes);
        for (int i = 0; i < images.size(); i++) {
            Image image = images.get(i);
            features.putRow(i, pixels(dir, image, loader, Files.readAllBytes(image.file), h, w, c));
            labels.putScalar(i, image.label, 1f);
        }
        return new LabeledData(features, labels, c, h, w);
    }

    /** One image's pixels [1, c·h·w] in [0, 1], decoded from its file's bytes. */
    private static INDArray pixels(Path dir, Image image, NativeImageLoader loader, byte[] bytes, int h, int w, int c)
            throws InvalidDatasetException {
        INDArray x;
        try {
            x = loader.asMatrix(new java.io.ByteArrayInputStream(bytes));
        } catch (IOException | RuntimeException e) {
            x = null;
        }
        if (x == null || x.length() != (long) c * h * w) {
            throw new InvalidDatasetException("image folder " + dir + ": image " + image.file + " cannot be decoded as a "
                    + h + "x" + w + "x" + c + " image; remove or replace it");
        }
        return x.reshape('c', 1, (long) c * h * w).castTo(DataType.FLOAT).divi(255.0);
    }

    /**
     * A folder's training images read by index ({@link #open}): each read decodes only the images asked for, on the
     * common fork-join pool, after checking each file's bytes against the SHA-256 taken when the folder was indexed.
     */
    private static final class Images implements ExampleSource {
        private final Path dir;
        private final List<Image> images;
        private final int classes;
        private final int h;
        private final int w;
        private final int c;
        private final ThreadLocal<NativeImageLoader> loaders;

        Images(Path dir, List<Image> images, int classes, int h, int w, int c) {
            this.dir = dir;
            this.images = images;
            this.classes = classes;
            this.h = h;
            this.w = w;
            this.c = c;
            this.loaders = ThreadLocal.withInitial(() -> new NativeImageLoader(h, w, c));
        }

        @Override
        public int size() {
            return images.size();
        }

        @Override
        public int numClasses() {
            return classes;
        }

        @Override
        public long[] exampleShape() {
            return new long[]{(long) c * h * w};
        }

        /**
         * @throws IllegalArgumentException if an index is outside [0, n) or the indices are not ascending, or an image
         *                                  changed since the folder was indexed (one that cannot be decoded reads as NaN)
         * @throws java.io.UncheckedIOException if a file cannot be read
         */
        @Override
        public LabeledData read(int[] sortedIndices) {
            Indices.checkAscending(sortedIndices, images.size());
            INDArray features = Nd4j.create(DataType.FLOAT, sortedIndices.length, (long) c * h * w);
            INDArray labels = Nd4j.create(DataType.FLOAT, sortedIndices.length, classes);
            java.util.stream.IntStream.range(0, sortedIndices.length).parallel().forEach(k -> {
                Image image = images.get(sortedIndices[k]);
                try {
                    byte[] bytes = Files.readAllBytes(image.file);
                    if (!Sha256.hex(bytes).equals(image.sha256)) {
                        throw new InvalidDatasetException("image folder " + dir + ": " + image.file + " changed since the folder "
                                + "was indexed (its SHA-256 differs); the data set is not the one the run was planned on");
                    }
                    INDArray x;
                    try {
                        x = pixels(dir, image, loaders.get(), bytes, h, w, c);
                    } catch (InvalidDatasetException undecodable) { // one image's content must not stop a charged run:
                        x = Nd4j.valueArrayOf(new long[]{1, (long) c * h * w}, Float.NaN); // not finite, so it adds nothing
                    }
                    features.putRow(k, x);
                } catch (InvalidDatasetException e) {
                    throw new IllegalArgumentException(e.getMessage(), e);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException("could not read " + image.file, e);
                }
            });
            for (int k = 0; k < sortedIndices.length; k++) {
                labels.putScalar(k, images.get(sortedIndices[k]).label, 1f);
            }
            return new LabeledData(features, labels, c, h, w);
        }

        @Override
        public void close() {
            // nothing open between reads
        }

        @Override
        public String toString() {
            return "image folder " + dir + " (" + images.size() + " training images, decoded when read)";
        }
    }

    private static String digest(List<String> identity, int h, int w, int c) {
        StringBuilder sb = new StringBuilder("dpdl4j image folder " + h + "x" + w + "x" + c + "\n");
        identity.forEach(line -> sb.append(line).append('\n'));
        return Sha256.hex(sb.toString().getBytes(StandardCharsets.UTF_8));
    }
}
