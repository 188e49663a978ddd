package org.dpdl4j.datasets;

/**
 * A dataset's training and test parts.
 *
 * @param name        the dataset's name (e.g. "mnist")
 * @param train       training examples in memory, or null when they are read by index from {@code trainSource}
 * @param test        test examples (never used for model selection)
 * @param digest      SHA-256 (hex) identifying the files read, for data whose content a name does not fix (a folder of
 *                    images, {@link ImageFolder#digest}; packed shards, their training manifest's); null for a named
 *                    data set whose files are verified against known checksums
 * @param trainSource the training examples read by index ({@link PackedShards}) when {@code train} is null, else null
 * @param publicTest  whether the test split is public, so that an exact score on it may be released: true for the
 *                    named public data sets (MNIST, Fashion-MNIST, CIFAR-10, whose loaders verify the published files),
 *                    false for every other (a folder of one's own images, packed shards, a caller's own data) unless
 *                    declared by {@link #withPublicTest}
 */
public record TrainTest(String name, LabeledData train, LabeledData test, String digest, ExampleSource trainSource,
                        boolean publicTest) {
    /**
     * Checks that the training examples are given in exactly one form.
     *
     * @param name        the dataset's name (e.g. "mnist")
     * @param train       training examples in memory, or null when they are read by index from {@code trainSource}
     * @param test        test examples (never used for model selection)
     * @param digest      SHA-256 (hex) identifying the files read, or null for a named data set with verified files
     * @param trainSource the training examples read by index when {@code train} is null, else null
     * @param publicTest  whether the test split is public (an exact score on it may be released)
     * @throws IllegalArgumentException unless exactly one of train and trainSource is given
     */
    public TrainTest {
        if ((train == null) == (trainSource == null)) {
            throw new IllegalArgumentException("give the training examples in memory or as a source, not " + (train == null
                    ? "neither" : "both"));
        }
    }

    /**
     * Data whose test split is private (not a named public data set), in either form.
     *
     * @param name        the dataset's name
     * @param train       training examples in memory, or null when they are read by index from {@code trainSource}
     * @param test        test examples (never used for model selection), private
     * @param digest      SHA-256 (hex) identifying the files read, or null
     * @param trainSource the training examples read by index when {@code train} is null, else null
     * @throws IllegalArgumentException unless exactly one of train and trainSource is given
     */
    public TrainTest(String name, LabeledData train, LabeledData test, String digest, ExampleSource trainSource) {
        this(name, train, test, digest, trainSource, false);
    }

    /**
     * Training data in memory, the test split private.
     *
     * @param name   the dataset's name (e.g. "mnist")
     * @param train  training examples in memory, not null
     * @param test   test examples (never used for model selection)
     * @param digest SHA-256 (hex) identifying the files read, or null for a named data set with verified files
     * @throws IllegalArgumentException if train is null
     */
    public TrainTest(String name, LabeledData train, LabeledData test, String digest) {
        this(name, train, test, digest, null, false);
    }

    /**
     * A data set whose content its name fixes (no digest), with its training data in memory and its test split private
     * (the loaders of the named public data sets declare theirs public with {@link #withPublicTest}).
     *
     * @param name  the dataset's name (e.g. "mnist")
     * @param train training examples in memory, not null
     * @param test  test examples (never used for model selection)
     * @throws IllegalArgumentException if train is null
     */
    public TrainTest(String name, LabeledData train, LabeledData test) {
        this(name, train, test, null, null, false);
    }

    /**
     * The same data with its test split declared public or private. Declaring it public says that the test examples
     * are nobody's private data (a published benchmark's test set, say): dpdl4j then releases a model's exact accuracy on
     * them, which no privacy guarantee covers otherwise.
     *
     * @param declared true: the test split is public; false: it is private
     * @return a copy with {@code publicTest} set
     */
    public TrainTest withPublicTest(boolean declared) {
        return new TrainTest(name, train, test, digest, trainSource, declared);
    }

    /**
     * The training examples, whichever form they were given in.
     *
     * @return {@code train} if it is not null, else {@code trainSource}
     */
    public ExampleSource trainExamples() {
        return train != null ? train : trainSource;
    }
}
