"""The names a program may use, by group, as the Autograd page's "What can I write?" panel
lists them: written by scripts/vocabulary.py from the allow-lists and the built-ins (which
import torch; the page does not), and checked against them by tests/unit/program/test_vocabulary.py.
Do not edit by hand: add a name to its table and run `python scripts/vocabulary.py --write`."""

from __future__ import annotations

# group title -> the names, space-separated, in sorted order
GROUPS: dict[str, str] = {
    "torch functions (`torch.…`)": (
        "abs acos add all allclose amax amin any arange argmax argmin argsort asin "
        "atan atan2 bernoulli bmm broadcast_to cartesian_prod cat ceil chunk clamp "
        "clip concat cos cosh cross cumprod cumsum diag diagonal dist div dot einsum "
        "eq equal erf exp exp2 expm1 eye flatten flip floor frac from_numpy full "
        "full_like gather ge gt index_select is_floating_point is_grad_enabled "
        "is_tensor isclose isfinite isinf isnan kron le lerp linspace log log10 log1p "
        "log2 log_softmax logaddexp logical_and logical_not logical_or logical_xor "
        "logspace logsumexp lt masked_select matmul max maximum mean median min "
        "minimum mm mul multinomial mv ne neg nonzero norm normal numel ones "
        "ones_like outer permute pow prod rand rand_like randint randint_like randn "
        "randn_like randperm reciprocal relu reshape roll round rsqrt sigmoid sign "
        "sin sinh softmax sort split sqrt square squeeze stack std sub sum t take tan "
        "tanh tensor topk trace transpose tril triu true_divide trunc unbind unique "
        "unsqueeze var where zeros zeros_like"
    ),
    "`torch.nn.functional` (`F.…`)": (
        "avg_pool1d avg_pool2d bilinear binary_cross_entropy "
        "binary_cross_entropy_with_logits conv1d conv2d cosine_similarity "
        "cross_entropy elu embedding gelu hardtanh huber_loss kl_div l1_loss "
        "layer_norm leaky_relu linear log_softmax logsigmoid max_pool1d max_pool2d "
        "mish mse_loss nll_loss normalize one_hot pad relu relu6 selu sigmoid silu "
        "smooth_l1_loss softmax softplus softsign tanh"
    ),
    "`torch.linalg`": ("vector_norm"),
    "dtypes (`torch.…`)": (
        "bfloat16 bool double float float16 float32 float64 half int int16 int32 "
        "int64 int8 long short uint8"
    ),
    "constants (`torch.…`)": ("e inf nan pi"),
    "tensor methods (`x.…()`)": (
        "abs abs_ add add_ all allclose amax amin any argmax argmin argsort backward "
        "bfloat16 bool ceil chunk clamp clamp_ clip clone contiguous copy_ cos cpu "
        "cuda cumsum detach detach_ diag diagonal dim div div_ dot double "
        "element_size eq equal exp exp_ expand expand_as fill_ flatten flip float "
        "floor gather ge gt half index_select int is_contiguous is_floating_point "
        "isinf isnan item le log log2 log_softmax logsumexp long lt masked_fill "
        "masked_fill_ masked_select matmul max maximum mean min minimum mm mul mul_ "
        "mv narrow ne neg neg_ nelement nonzero norm numel numpy outer permute pow "
        "pow_ prod reciprocal relu relu_ repeat requires_grad_ reshape reshape_as "
        "retain_grad roll round rsqrt select sigmoid sigmoid_ sign sin size softmax "
        "sort split sqrt square squeeze std sub sub_ sum t tanh tanh_ to tolist topk "
        "transpose tril triu type type_as unbind unique unsqueeze var view view_as "
        "where zero_"
    ),
    "tensor attributes (`x.…`)": (
        "T data device dtype grad grad_fn is_cuda is_leaf mT ndim requires_grad shape"
    ),
    "`torch.autograd`": ("detect_anomaly functional grad set_detect_anomaly"),
    "`torch.autograd.functional`": ("hessian jacobian jvp vjp"),
    "`torch.nn.init`": (
        "calculate_gain constant_ dirac_ eye_ kaiming_normal_ kaiming_uniform_ "
        "normal_ ones_ trunc_normal_ uniform_ xavier_normal_ xavier_uniform_ zeros_"
    ),
    "layers (`nn.…`)": (
        "AvgPool2d BCEWithLogitsLoss BatchNorm1d BatchNorm2d Conv2d CrossEntropyLoss "
        "Dropout Embedding Flatten GELU Identity L1Loss LayerNorm LazyConv2d "
        "LazyLinear LeakyReLU Linear LogSoftmax MSELoss MaxPool2d ModuleList "
        "MultiheadAttention NLLLoss ReLU Sequential Sigmoid Softmax Tanh "
        "TransformerEncoderLayer"
    ),
    "layer methods (`net.…()`)": (
        "append apply buffers cpu cuda eval forward load_state_dict named_parameters "
        "parameters requires_grad_ state_dict to train zero_grad"
    ),
    "layer attributes (`net.…`)": (
        "batch_first bias dilation dim embed_dim embedding_dim end_dim eps groups "
        "head_dim in_channels in_features in_proj_bias in_proj_weight kernel_size "
        "linear1 linear2 momentum norm1 norm2 normalized_shape num_batches_tracked "
        "num_embeddings num_features num_heads out_channels out_features out_proj p "
        "padding padding_idx running_mean running_var self_attn start_dim stride "
        "training weight"
    ),
    "optimizers (`optim.…`)": ("Adagrad Adam AdamW RMSprop SGD"),
    "schedulers (`optim.lr_scheduler.…`)": ("CosineAnnealingLR ExponentialLR StepLR"),
    "data (`torch.utils.data.…`)": ("DataLoader TensorDataset"),
    "built-in functions": (
        "abs all any bool dict divmod enumerate filter float gradviz_cifar10_sample "
        "int isinstance iter len list map max min next pow print range repr reversed "
        "round set sorted str sum tuple zip"
    ),
    "`math`": (
        "acos asin atan atan2 ceil copysign cos cosh degrees e exp expm1 fabs floor "
        "fmod hypot inf isclose isfinite isinf isnan log log10 log1p log2 nan pi "
        "radians sin sinh sqrt tan tanh tau trunc"
    ),
    "`numpy` (`import numpy as np`, `np.…`)": (
        "abs absolute add all allclose amax amin any arange arctan argmax argmin "
        "argsort array array_equal asarray average bool_ ceil clip column_stack "
        "concatenate copy cos cosh count_nonzero cumprod cumsum divide dot double e "
        "equal exp exp2 expand_dims expm1 eye flip float16 float32 float64 float_ "
        "floor floor_divide full full_like greater greater_equal half hstack identity "
        "inf int16 int32 int64 int8 int_ intp isclose isfinite isinf isnan less "
        "less_equal linspace log log10 log1p log2 logical_and logical_not logical_or "
        "logical_xor matmul max maximum mean median min minimum mod multiply nan "
        "negative newaxis nonzero not_equal ones ones_like outer pi power prod ravel "
        "reciprocal repeat reshape rint round sign sin single sinh sort sqrt square "
        "squeeze stack std subtract sum tan tanh tile transpose true_divide uint8 "
        "unique var vstack where zeros zeros_like"
    ),
    "`np.random`": (
        "choice default_rng normal permutation rand randint randn random seed shuffle uniform"
    ),
    "`np.linalg`": ("det inv norm solve"),
    "array methods (`a.…()`)": (
        "all any argmax argmin argsort astype clip copy cumprod cumsum dot fill "
        "flatten item max mean min nonzero prod ravel repeat reshape round sort "
        "squeeze std sum tolist transpose var"
    ),
    "array attributes (`a.…`)": ("T dtype itemsize nbytes ndim shape size"),
}
