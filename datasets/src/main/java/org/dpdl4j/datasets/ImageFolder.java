package org.dpdl4j.datasets;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.datavec.api.io.labels.ParentPathLabelGenerator;
import org.datavec.api.split.FileSplit;
import org.datavec.image.loader.NativeImageLoader;
import org.datavec.image.recordreader.ImageRecordReader;
import org.deeplearning4j.datasets.datavec.RecordReaderDataSetIterator;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;

/**
 * A user's own images: a directory with one sub-directory per class (the sub-directory's name is
 * the label, classes sorted by name), read through DataVec's {@link ImageRecordReader} with a
 * {@link ParentPathLabelGenerator}, resized to height×width with the given channel count, pixels
 * scaled to [0, 1]. If the directory has {@code train/} and {@code test/} sub-directories they are
 * used as the split; otherwise a seeded 20 % of the images are held out as the test set.
 *
 * <p>Needs DataVec on the classpath: {@code org.datavec:datavec-data-image} and
 * {@code org.deeplearning4j:deeplearning4j-datavec-iterators} (version 1.0.0-M2.1) are optional dependencies of
 * {@code dpdl4j-datasets}, left out of an application that does not read image folders (they bring OpenCV and JavaCV).
 */
public final class ImageFolder {
    private static final String[] EXTENSIONS = NativeImageLoader.ALLOWED_FORMATS;

    private ImageFolder() {
    }

    /**
     * @param directory class-per-sub-directory root
     * @param height    target height ≥ 1
     * @param width     target width ≥ 1
     * @param channels  1 (grey) or 3 (colour)
     * @param seed      seed of the held-out split
     * @throws InvalidDatasetException if the directory is missing, holds fewer than 2 classes or no images
     */
    public static TrainTest load(Path directory, int height, int width, int channels, long seed) throws IOException {
        if (height < 1 || width < 1) {
            throw new IllegalArgumentException("image height and width must be >= 1, got " + height + "x" + width);
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
        Path train = directory.resolve("train");
        Path test = directory.resolve("test");
        String name = "folder:" + directory;
        if (Files.isDirectory(train) && Files.isDirectory(test)) {
            List<String> classes = classes(train);
            return new TrainTest(name, read(train, classes, height, width, channels),
                    read(test, classes, height, width, channels));
        }
        List<String> classes = classes(directory);
        LabeledData all = read(directory, classes, height, width, channels);
        LabeledData.Split split = all.split(0.2, seed);
        return new TrainTest(name, split.train(), split.validation());
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

    private static LabeledData read(Path dir, List<String> classes, int h, int w, int c) throws IOException {
        FileSplit files = new FileSplit(dir.toFile(), EXTENSIONS, new Random(0));
        if (files.length() == 0) {
            throw new InvalidDatasetException("image folder " + dir + " holds no images (" + String.join(", ", EXTENSIONS) + ")");
        }
        try (ImageRecordReader reader = new ImageRecordReader(h, w, c, new ParentPathLabelGenerator())) {
            reader.setLabels(classes);
            reader.initialize(files);
            var it = new RecordReaderDataSetIterator(reader, 256, 1, classes.size());
            List<INDArray> xs = new ArrayList<>();
            List<INDArray> ys = new ArrayList<>();
            try {
                while (it.hasNext()) {
                    DataSet ds = it.next();
                    INDArray x = ds.getFeatures();
                    xs.add(x.reshape('c', x.size(0), (long) c * h * w).div(255.0));
                    ys.add(ds.getLabels());
                }
            } catch (RuntimeException e) {
                throw new InvalidDatasetException("image folder " + dir + ": " + unreadable(files, h, w, c)
                        + " cannot be decoded (" + e.getClass().getSimpleName() + "); remove or replace it");
            }
            INDArray features = Nd4j.vstack(xs).castTo(org.nd4j.linalg.api.buffer.DataType.FLOAT);
            INDArray labels = Nd4j.vstack(ys).castTo(org.nd4j.linalg.api.buffer.DataType.FLOAT);
            return new LabeledData(features, labels, c, h, w);
        }
    }

    /** The first file the native loader cannot decode, found one by one after a batch failed. */
    private static String unreadable(FileSplit files, int h, int w, int c) {
        NativeImageLoader loader = new NativeImageLoader(h, w, c);
        for (java.net.URI uri : files.locations()) {
            try {
                loader.asMatrix(new java.io.File(uri));
            } catch (IOException | RuntimeException e) {
                return "image " + java.nio.file.Paths.get(uri);
            }
        }
        return "an image";
    }
}
