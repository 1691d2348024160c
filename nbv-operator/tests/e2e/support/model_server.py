"""A real KServe model server on loopback, for the end-to-end suite's model scenarios.

    python3 model_server.py --model_name iris --http_port 8080

It trains a small scikit-learn classifier on the iris data set that scikit-learn ships
(no download), wraps it in a `kserve.Model` and serves it with `kserve.ModelServer`:
the V1 protocol (`POST /v1/models/<name>:predict`, `{"instances": [...]}`) and the V2
open inference protocol (`POST /v2/models/<name>/infer`), with their health paths. The
flags are kserve's own (its parser is this script's parent); gRPC is off and there is
one worker, so the process listens on the one HTTP port and nowhere else.

The model is deterministic (fixed random_state, a data set that never changes): for
[[6.8, 2.8, 4.8, 1.4], [6.0, 3.4, 4.5, 1.6]] it predicts classes [1, 1] (versicolor),
and for [[5.1, 3.5, 1.4, 0.2], [6.8, 2.8, 4.8, 1.4], [6.3, 3.3, 6.0, 2.5]] one of each
class, [0, 1, 2]. Answers as observed with kserve 0.21.0 and scikit-learn 1.9.1 (send
`Content-Type: application/json`: kserve reads a form-encoded body, curl's default
for -d, as something else and answers 500):

    POST /v1/models/iris:predict  {"instances": [[6.8,2.8,4.8,1.4],[6.0,3.4,4.5,1.6]]}
    -> {"predictions":[1,1]}

    POST /v2/models/iris/infer
      {"inputs": [{"name": "input-0", "shape": [2, 4], "datatype": "FP32",
                   "data": [[6.8,2.8,4.8,1.4],[6.0,3.4,4.5,1.6]]}]}
    -> {"model_name":"iris","model_version":null,"id":"<a uuid>","parameters":null,
        "outputs":[{"name":"output-0","shape":[2],"datatype":"INT64",
                    "parameters":null,"data":[1,1]}]}

SIGTERM stops it: uvicorn drains and exits, then kserve unloads the model.
"""

import argparse

import kserve
from kserve import model_server
from kserve.protocol.rest.server import RESTServer
from kserve.utils.utils import get_predict_input, get_predict_response
from sklearn.datasets import load_iris
from sklearn.tree import DecisionTreeClassifier

LOOPBACK = "127.0.0.1"


class LoopbackRESTServer(RESTServer):
    """kserve's REST server, bound to loopback: kserve hard-codes 0.0.0.0 and offers
    no flag, and the suite's servers must never listen beyond this machine."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # uvicorn reads the host when it binds, after this constructor.
        self.config.host = LOOPBACK


class Iris(kserve.Model):
    """A decision tree on iris: four float features in, a class index (0-2) out."""

    def __init__(self, name: str):
        super().__init__(name)
        self.classifier = None

    def load(self) -> bool:
        data = load_iris()
        self.classifier = DecisionTreeClassifier(random_state=0, max_depth=3)
        self.classifier.fit(data.data, data.target)
        self.ready = True
        return self.ready

    def predict(self, payload, headers=None):
        # kserve hands V1 bodies over as dicts and V2 ones as InferRequest; its own
        # helpers turn either into an array and the predictions back into the
        # protocol's shape, as kserve's sklearn server does.
        instances = get_predict_input(payload)
        return get_predict_response(payload, self.classifier.predict(instances), self.name)


def main():
    parser = argparse.ArgumentParser(parents=[model_server.parser])
    args, _ = parser.parse_known_args()
    # ModelServer.start builds its REST server from this module-level name.
    model_server.RESTServer = LoopbackRESTServer
    model = Iris(args.model_name)
    model.load()
    kserve.ModelServer(http_port=args.http_port, workers=1, enable_grpc=False).start(
        [model]
    )


if __name__ == "__main__":
    main()
