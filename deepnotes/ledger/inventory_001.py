"""Inventory of seed 001 (the DeepNet repost with side notes)."""

from deepnotes.ledger.items import Item

ITEMS = (
    # 前言
    Item(
        "claim 1",
        "main",
        "前言",
        "numeric",
        "Big Transformers grow wide, not deep: GPT-3 has over 100B parameters but only 96 layers (as seed 000)",
        "thousand_layers",
    ),
    Item(
        "claim 2",
        "main",
        "前言",
        "qualitative",
        "Compute is not the main limit on depth: a wide-shallow model needs hardly less compute than a narrow-deep one "
        "(as seed 000)",
        "thousand_layers",
        not_checked="a statement about production-scale compute (as seed 000 claim 2) the toy stacks cannot test",
    ),
    Item(
        "claim 3",
        "main",
        "前言",
        "qualitative",
        "Deep Transformers stay hard to train even after gradient vanishing/explosion has been remedied (as seed 000)",
        "increment_explosion",
    ),
    Item(
        "figure 1",
        "main",
        "前言",
        "figure",
        "An illustration of the depths of existing Transformer models (an image; the seed states no numbers from it)",
        "thousand_layers",
        "an illustrative image; its point is claims 1 and 3",
    ),
    Item(
        "claim 4",
        "main",
        "前言",
        "qualitative",
        "Admin: the root difficulty is 'increment explosion', the deeper the model the larger its output perturbation "
        "per update (as seed 000)",
        "increment_explosion",
    ),
    Item(
        "claim 5",
        "main",
        "前言",
        "numeric",
        "DeepNet, adjusting normalization and initialization from a scale analysis, trained a 1000-layer Transformer "
        "(as seed 000)",
        "thousand_layers",
    ),
    Item(
        "claim 6",
        "main",
        "前言",
        "qualitative",
        "The paper cited: 'DeepNet: Scaling Transformers to 1,000 Layers', "
        "arXiv 2203.00555, code microsoft/torchscale, MSRA",
        "thousand_layers",
        "a citation of the paper's title, URL, code and affiliation: nothing to check",
    ),
    # 1）增量爆炸
    Item(
        "side note 1",
        "side note",
        "1）增量爆炸",
        "qualitative",
        "'Increment' means the per-step update; 'explosion' means "
        "updates so large that training falls into local optima "
        "more easily",
        "increment_explosion",
        if_unchecked="a gloss of the term 'increment explosion'",
    ),
    Item(
        "eq. (1)",
        "main",
        "1）增量爆炸",
        "equation",
        "ΔL = L(θ+Δθ) − L(θ) ≈ ⟨∇L, Δθ⟩: to first order the loss "
        "change is the gradient's inner product with the update "
        "(as seed 000)",
        "increment_explosion",
    ),
    Item(
        "claim 7",
        "main",
        "1）增量爆炸",
        "qualitative",
        "The bracket ⟨·⟩ of eq. (1) is glossed as 'multiplication by the chain rule' (as printed)",
        "increment_explosion",
        not_checked=(
            "a gloss of notation: ⟨∇L, Δθ⟩ is an inner product, the sum over parameters that the chain rule "
            "gives for d/dε L(θ + εΔθ); 'chain-rule multiplication' is loose wording for it, and the "
            "increment chapter checks the expansion itself (eq. (1), first order)"
        ),
    ),
    Item(
        "claim 8",
        "main",
        "1）增量爆炸",
        "equation",
        "For SGD, Δθ = −η∇L, so ΔL ≈ −η‖∇L‖² (as seed 000)",
        "increment_explosion",
    ),
    Item(
        "claim 9",
        "main",
        "1）增量爆炸",
        "scaling",
        "N layers of K parameters each (on average), with Xavier init and normalization keeping most gradients O(1), "
        "give ΔL = O(ηNK)",
        "increment_explosion",
    ),
    Item(
        "side note 2",
        "side note",
        "1）增量爆炸",
        "scaling",
        "‖x‖² = Σᵢ xᵢ² is a sum of n terms and hence O(n), which is why ‖∇L‖² and ΔL grow like the parameter count NK",
        "increment_explosion",
    ),
    Item(
        "claim 10",
        "main",
        "1）增量爆炸",
        "qualitative",
        "Since ΔL ∝ N, deeper models more easily fall early into poor local optima, training stalls or collapses: "
        "increment explosion (as seed 000)",
        "increment_explosion",
    ),
    Item(
        "claim 11",
        "main",
        "1）增量爆炸",
        "scaling",
        "Remedy 1, warmup: start with a learning rate no larger than O(η/N), then raise it slowly (as seed 000)",
        "increment_explosion",
    ),
    Item(
        "claim 12",
        "main",
        "1）增量爆炸",
        "scaling",
        "Remedy 2, initialization: gradients of O(1/√N) "
        "make each step's ΔL = O(ηK), cancelling the depth (as seed 000)",
        "increment_explosion",
    ),
    # 2）量级分析
    Item(
        "eq. (2)",
        "main",
        "2）量级分析",
        "definition",
        "W = λU with λ = argmin_{κ>0} ‖WWᵀ/κ² − I‖: a scalar magnitude λ times a matrix U as orthogonal as possible "
        "(as seed 000)",
        "magnitude_decomposition",
        "definition of the magnitude λ: nothing to check",
    ),
    Item(
        "claim 13",
        "main",
        "2）量级分析",
        "qualitative",
        "With Xavier initialization of W, λ plays the role of the gain: "
        "the Xavier matrix multiplied by λ (as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "side note 3",
        "side note",
        "2）量级分析",
        "qualitative",
        "For W = λU with U nearly orthogonal, ‖Wx‖ = λ‖Ux‖ ≈ λ‖x‖: λ is the factor by which W rescales norms, "
        "hence the 'magnitude'",
        "magnitude_decomposition",
    ),
    Item(
        "side note 4",
        "side note",
        "2）量级分析",
        "qualitative",
        "A Xavier-initialized matrix is close to an orthogonal matrix (as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "eq. (3)",
        "main",
        "2）量级分析",
        "equation",
        "∂L(λU)/∂λ = ⟨∂L/∂W, U⟩: the derivative in the scalar λ is the matrix gradient projected on U (as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "claim 14",
        "main",
        "2）量级分析",
        "qualitative",
        "So ∂L/∂λ is proportional in magnitude to ∂L/∂W and serves as a scalar probe of the matrix gradient's size "
        "(as seed 000)",
        "magnitude_decomposition",
    ),
    # 3）FFN 层梯度
    Item(
        "claim 15",
        "main",
        "3）FFN 层梯度",
        "qualitative",
        "Many experiments show Pre-LN is easier to train but Post-LN usually ends better, so DeepNet keeps Post-LN "
        "(as seed 000)",
        "post_vs_pre_norm",
    ),
    Item(
        "eq. (4)",
        "main",
        "3）FFN 层梯度",
        "equation",
        "DeepNorm: x_{l+1} = LN(αx_l + F(x_l)) = LN(x_l + F(x_l)/α), α > 0 a constant (as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "eq. (5)",
        "main",
        "3）FFN 层梯度",
        "definition",
        "The FFN sublayer in DeepNorm form: x_{l+1} = LN(x_l + φ(x_l W₁)W₂/α) (as seed 000)",
        "magnitude_decomposition",
        "the FFN sublayer written in DeepNorm form: notation",
    ),
    Item(
        "claim 16",
        "main",
        "3）FFN 层梯度",
        "qualitative",
        "ReLU and its variants (Swish, GeLU) are (approximately) positively homogeneous: φ(λx) = λφ(x) for λ > 0 "
        "(as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "eq. (6)",
        "main",
        "3）FFN 层梯度",
        "equation",
        "With W_i = λ_i U_i: x_{l+1} = LN(z_{l+1}), z_{l+1} = x_l + λ₁λ₂ φ(x_l U₁)U₂/α (as seed 000)",
        "magnitude_decomposition",
        if_unchecked="the substitution W = λU in the FFN sublayer (as seed 000 eq. (6))",
    ),
    Item(
        "eq. (7)",
        "main",
        "3）FFN 层梯度",
        "equation",
        "Chain rule: ∂L/∂λ₁ = ∂L/∂x_{l+1} · ∂x_{l+1}/∂z_{l+1} · λ₂φ(x_l U₁)U₂/α, and the same with λ₁ for ∂L/∂λ₂ "
        "(as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "claim 17",
        "main",
        "3）FFN 层梯度",
        "scaling",
        "Asserted: ∂L/∂x_{l+1} and ∂x_{l+1}/∂z_{l+1} are O(1), "
        "and φ(x_l U₁)U₂ is O(1) since U₁, U₂ are near orthogonal "
        "(as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "eq. (8)",
        "main",
        "3）FFN 层梯度",
        "equation",
        "FFN: ∂L/∂λ₁ = O(λ₂/α), ∂L/∂λ₂ = O(λ₁/α) (as seed 000)",
        "magnitude_decomposition",
    ),
    # 4）Self-Attention 梯度
    Item(
        "eq. (9)",
        "main",
        "4）Self-Attention 梯度",
        "definition",
        "Single-head attention sublayer, scale omitted: x_{l+1} = LN(x_l + σ(x_l W_q W_kᵀ x_lᵀ) x_l W_v W_o/α) "
        "(as seed 000)",
        "magnitude_decomposition",
        "the attention sublayer written in DeepNorm form: notation",
    ),
    Item(
        "eq. (10)",
        "main",
        "4）Self-Attention 梯度",
        "equation",
        "Decomposed: z_{l+1} = x_l + λ_v λ_o σ(λ_q λ_k x_l U_q U_kᵀ x_lᵀ) x_l U_v U_o/α, x_{l+1} = LN(z_{l+1}) "
        "(as seed 000)",
        "magnitude_decomposition",
        if_unchecked="the substitution W = λU in the attention sublayer (as seed 000 eq. (10))",
    ),
    Item(
        "claim 18",
        "main",
        "4）Self-Attention 梯度",
        "qualitative",
        "Because of the softmax, the gradients of λ_q, λ_k are small and barely affect the update; λ_v, λ_o suffice "
        "(as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "eq. (11)",
        "main",
        "4）Self-Attention 梯度",
        "equation",
        "Chain rule: ∂L/∂λ_v = ∂L/∂x_{l+1} · ∂x_{l+1}/∂z_{l+1} · λ_o σ(·)x_l U_v U_o/α, and with λ_v for ∂L/∂λ_o "
        "(as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "claim 19",
        "main",
        "4）Self-Attention 梯度",
        "scaling",
        "∂L/∂x, ∂x/∂z again O(1); softmax averages tokens, keeping their scale, so σ(·)x_l U_v U_o = O(1) "
        "(as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "eq. (12)",
        "main",
        "4）Self-Attention 梯度",
        "equation",
        "Attention: ∂L/∂λ_v = O(λ_o/α), ∂L/∂λ_o = O(λ_v/α) (as seed 000)",
        "magnitude_decomposition",
    ),
    # 5）初步结论
    Item(
        "eq. (13)",
        "main",
        "5）初步结论",
        "equation",
        "With all λ equal (at least at initialization): ∂L/∂λ = O(λ/α) (as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "claim 20",
        "main",
        "5）初步结论",
        "definition",
        "An N-layer Transformer has N attention and N FFN sublayers, so strictly 2N residual layers (as seed 000)",
        "magnitude_decomposition",
        "a counting convention (depth 2N): nothing to check",
    ),
    Item(
        "claim 21",
        "main",
        "5）初步结论",
        "scaling",
        "By the increment-explosion argument gradients must be O(1/√(2N)), which λ/α = 1/√(2N) achieves (as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "claim 22",
        "main",
        "5）初步结论",
        "scaling",
        "The paper's looser bound gives λ/α = 1/√(4N), equivalent in order of magnitude (as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "eq. (14)",
        "main",
        "5）初步结论",
        "equation",
        "SGD, with λ = 1/α (the paper's symmetry choice): α = (2N)^{1/4}, λ = (2N)^{-1/4} (as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "side note 5",
        "side note",
        "5）初步结论",
        "qualitative",
        "Two other solutions of λ/α = (2N)^{-1/2}: α = 1, "
        "λ = (2N)^{-1/2} and α = (2N)^{1/2}, λ = 1; each has a drawback "
        "(as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "claim 1",
        "side note",
        "5）初步结论",
        "scaling",
        "α=1, λ=(2N)^{-1/2}: init, gradient and SGD step all shrink by (2N)^{-1/2}, the relative step is unchanged, "
        "λ may leave that scale in a few steps",
        "magnitude_decomposition",
    ),
    Item(
        "claim 2",
        "side note",
        "5）初步结论",
        "scaling",
        "α=(2N)^{1/2}, λ=1: init unchanged but gradient and SGD step shrink by (2N)^{-1/2}, so relative steps shrink "
        "and learning may be very slow",
        "magnitude_decomposition",
    ),
    Item(
        "side note 6",
        "side note",
        "5）初步结论",
        "qualitative",
        "α is what scales the gradients, λ is what scales the parameters' initialization",
        "magnitude_decomposition",
    ),
    Item(
        "eq. (15)",
        "main",
        "5）初步结论",
        "equation",
        "α = (2N)^{1/4}, λ = (2N)^{-1/4} lies between the two alternatives of side note 5 (as seed 000)",
        "magnitude_decomposition",
        "restates eq. (14)",
    ),
    Item(
        "claim 23",
        "main",
        "5）初步结论",
        "qualitative",
        "That choice keeps the (2N)^{-1/2} gradient scaling while making early steps slower but not too slow: "
        "an implicit warmup (as seed 000)",
        "magnitude_decomposition",
    ),
    # 6）多种优化器
    Item(
        "claim 24",
        "main",
        "6）多种优化器",
        "definition",
        "Adaptive optimizers come in two kinds: second-moment corrected (Adam, AdamW) and parameter-norm corrected "
        "(LAMB, AdaFactor) (as seed 000)",
        "magnitude_decomposition",
        "a classification of optimizers: background",
    ),
    Item(
        "claim 25",
        "main",
        "6）多种优化器",
        "qualitative",
        "The paper derives for SGD and finds it also works for Adam, but in theory the SGD result does not carry over "
        "(as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "claim 26",
        "main",
        "6）多种优化器",
        "scaling",
        "Adam: Δθ ≈ −η·sign(∇L), so ΔL ≈ −η‖∇L‖₁, linear rather than quadratic in the gradient (as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "side note 7",
        "side note",
        "6）多种优化器",
        "qualitative",
        "The sign(·) in Adam's update is glossed as an indicator function (as printed)",
        "magnitude_decomposition",
    ),
    Item(
        "claim 27",
        "main",
        "6）多种优化器",
        "scaling",
        "For Adam a depth-independent update needs the gradient shrunk to 1/(2N), i.e. λ/α = 1/(2N) (as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "eq. (16)",
        "main",
        "6）多种优化器",
        "equation",
        "Adam, with λ = 1/α: α = (2N)^{1/2}, λ = (2N)^{-1/2} (as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "claim 28",
        "main",
        "6）多种优化器",
        "scaling",
        "LAMB: Δθ ≈ −η‖θ‖·sign(∇L), so ΔL ≈ −η‖θ‖‖∇L‖₁ (as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "claim 29",
        "main",
        "6）多种优化器",
        "scaling",
        "Parameters scale by λ and gradients by λ/α, so LAMB's ΔL = O(2Nλ²/α), requiring λ²/α = 1/(2N) (as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "claim 30",
        "main",
        "6）多种优化器",
        "qualitative",
        "LAMB's relative update per step is η whatever α, λ are, so take α = 1, λ = (2N)^{-1/2} (as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "table 1",
        "main",
        "6）多种优化器",
        "table",
        "Summary: SGD α=(2N)^{1/4}, λ=(2N)^{-1/4}; Adam α=(2N)^{1/2}, λ=(2N)^{-1/2}; LAMB α=1, λ=(2N)^{-1/2}, "
        "with each Δθ, ΔL (as seed 000)",
        "magnitude_decomposition",
        "the source's own summary of eqs. (14), (16) and claims 26-30",
    ),
    # 7）事后分析
    Item(
        "claim 31",
        "main",
        "7）事后分析",
        "scaling",
        "After the rescaling, each residual branch (FFN or attention) starts scaled by λ²/α (as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "claim 32",
        "main",
        "7）事后分析",
        "qualitative",
        "λ²/α is small for every optimizer, so the model starts near the identity and the O(1) assertion of claim 17 "
        "holds (as seed 000)",
        "magnitude_decomposition",
    ),
    Item(
        "claim 33",
        "main",
        "7）事后分析",
        "qualitative",
        "The analysis carries over to Pre-LN with essentially the same result: no α is needed (α = 1), only λ is "
        "recomputed (as seed 000)",
        "post_vs_pre_norm",
    ),
    Item(
        "claim 34",
        "main",
        "7）事后分析",
        "numeric",
        "Depth matters: the paper's 200-layer narrow-deep model (3.2B params) beat the former 48-layer wide-shallow "
        "SOTA (12B) (as seed 000)",
        "thousand_layers",
    ),
    Item(
        "figure 2",
        "main",
        "7）事后分析",
        "figure",
        "The paper's figure: the deep-narrow model beats the shallow-wide one (as seed 000)",
        "thousand_layers",
        "an image of the paper's result; what it shows is claim 34",
    ),
    # DeepNet 代码
    Item(
        "figure 3",
        "main",
        "DeepNet 代码",
        "figure",
        "An image of DeepNet's pseudocode (its content is not in the seed's text)",
        "thousand_layers",
        "an image of the paper's pseudocode; the seed states nothing about its content",
    ),
)
