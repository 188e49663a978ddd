package org.dpdl4j.dpsgd;

import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.graph.vertex.GraphVertex;
import org.deeplearning4j.nn.workspace.LayerWorkspaceMgr;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The exact fallback for a graph vertex without parameters and without a kernel of its own ({@code ScaleVertex},
 * {@code ShiftVertex}, {@code L2NormalizeVertex}, {@code SubsetVertex}, {@code ReshapeVertex}, {@code L2Vertex},
 * {@code PoolHelperVertex}, {@code ElementWiseVertex} Max, …): DL4J's own {@code doForward} and {@code doBackward} on
 * a private copy of the vertex, for the whole batch. A vertex has no parameters, so it adds nothing to an example's
 * gradient; what matters is that it passes each example's gradient on unmixed, so the engine's {@link MixingCheck}
 * checks that each example's output alone equals that example's rows of the batch output (else it is refused: such a vertex mixes
 * the examples, and per-example gradients are not defined through it).
 */
final class VertexFallbackKernel extends MultiInputKernel {
    private final GraphVertex vertex;

    private VertexFallbackKernel(GraphVertex vertex) {
        this.vertex = vertex;
    }

    /**
     * @param conf  the vertex's configuration
     * @param graph the graph it belongs to
     * @param name  its name
     * @param index its index in the graph
     * @throws IllegalArgumentException if the vertex has parameters
     */
    static VertexFallbackKernel of(org.deeplearning4j.nn.conf.graph.GraphVertex conf, ComputationGraph graph, String name, int index,
                                   String where, DataType dataType) {
        if (conf.numParams(false) > 0) {
            throw new IllegalArgumentException(where + ": a graph vertex with parameters (" + conf.getClass().getSimpleName()
                    + ") is not supported by the DP-SGD engine");
        }
        // from a copy of the configuration: SameDiff vertices keep per-instance state in it, which the network's own needs
        org.deeplearning4j.nn.conf.graph.GraphVertex copy = conf.clone();
        if (copy instanceof org.deeplearning4j.nn.conf.layers.samediff.SameDiffVertex sd) {
            sd.setDataType(dataType); // not carried by clone()
        }
        return new VertexFallbackKernel(copy.instantiate(graph, name, index, null, false, dataType));
    }

    /** {@inheritDoc} (code the engine does not know: checked by {@link MixingCheck}) */
    @Override
    boolean mayMixExamples() {
        return true;
    }

    @Override
    boolean deterministic() {
        return false; // a vertex of unknown kind may draw random numbers
    }

    /** {@inheritDoc} (the shape need not be kept: DL4J's vertex says) */
    @Override
    boolean passesShape() {
        return false;
    }

    @Override
    INDArray forward(INDArray[] x, boolean keep) {
        return run(x, training); // the engine's MixingCheck has checked that it keeps the examples apart
    }

    private INDArray run(INDArray[] x, boolean training) {
        INDArray[] copies = new INDArray[x.length];
        for (int j = 0; j < x.length; j++) {
            copies[j] = x[j].dup(); // DL4J's vertices may work in place
        }
        vertex.setInputs(copies);
        INDArray out = vertex.doForward(training, LayerWorkspaceMgr.noWorkspaces());
        return out.isView() || out.ordering() != 'c' ? out.dup('c') : out;
    }

    @Override
    INDArray[] backwardInputs(INDArray gradOutput, boolean needInputGradient) {
        if (!needInputGradient) {
            return null;
        }
        vertex.setEpsilon(gradOutput.dup());
        INDArray[] g = vertex.doBackward(false, LayerWorkspaceMgr.noWorkspaces()).getSecond();
        INDArray[] out = new INDArray[g.length];
        for (int j = 0; j < g.length; j++) {
            out[j] = g[j] == null ? null : g[j].dup('c');
        }
        return out;
    }

    @Override
    void clear() {
        vertex.clear();
    }
}
