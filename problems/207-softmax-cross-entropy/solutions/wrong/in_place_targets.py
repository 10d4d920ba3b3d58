"""你把被忽略的标签原地改成了 0（targets[~keep] = 0）。这会改掉调用者的 targets：ignore_index 的标记没了，同一批标签再用一次（下一个损失、下一步的统计）时，填充位置会被当成类别 0 计入损失。用 torch.where(keep, targets, 0) 或 targets.masked_fill(~keep, 0) 得到一个新张量。
You overwrite the ignored labels with 0 in place (targets[~keep] = 0). That changes the caller's targets: the ignore_index marks are gone, so the next time the same labels are used (another loss, a statistic of the same batch) the padding counts as class 0. Use torch.where(keep, targets, 0) or targets.masked_fill(~keep, 0), which make a new tensor."""


def _lsm(x, dim):
    xf = x.float()
    z = xf - xf.amax(dim, keepdim=True)
    return z - z.exp().sum(dim, keepdim=True).log()


def softmax(x, dim=-1):
    return _lsm(x, dim).exp().to(x.dtype)


def log_softmax(x, dim=-1):
    return _lsm(x, dim).to(x.dtype)


def cross_entropy(logits, targets, ignore_index=-100):
    logp = _lsm(logits, -1)
    keep = targets != ignore_index
    targets[~keep] = 0  # -100 is no valid index: point the ignored rows at class 0
    nll = -logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return (nll * keep).sum() / keep.sum()
