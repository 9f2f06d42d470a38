package dev.dripline.app.pool;

import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.app.request.BodyReader;
import dev.dripline.app.request.BoundBody;
import dev.dripline.store.catalogue.FieldError;
import dev.dripline.store.pool.PoolRepository;
import jakarta.inject.Singleton;
import java.util.List;
import java.util.regex.Pattern;

/**
 * What the pools API does (P5): lists the pools with what draws from them, creates and resizes
 * them. The claims read a pool's size at every claim, so a resize takes effect at the next one.
 */
@Singleton
public class PoolService {
  /** A pool's name: what a definition's {@code pool()} or a run's {@code pool} says. */
  static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,99}");

  private final PoolRepository pools;
  private final BodyReader bodies;

  public PoolService(PoolRepository pools, BodyReader bodies) {
    this.pools = pools;
    this.bodies = bodies;
  }

  /** Every pool, by name, with its slots in use and its waiters. */
  public List<PoolResponse> list() {
    return pools.list().stream().map(PoolResponse::of).toList();
  }

  /**
   * Creates pool {@code name} or resizes it to the body's {@code size}; answers the pool as it is
   * then.
   *
   * @throws ValidationProblem naming {@code name} or {@code size} when either is bad
   */
  public PoolResponse put(String name, String body) {
    BoundBody<PoolSizeRequest> request = bodies.read(body, PoolSizeRequest.class);
    if (!NAME.matcher(name).matches()) {
      request =
          request.withErrorFirst(
              new FieldError(
                  "name",
                  "must be 1 to 100 letters, digits, '.', '_' or '-', not starting with"
                      + " '.', '_' or '-'"));
    }
    if (!request.errors().isEmpty()) {
      throw new ValidationProblem(request.errors());
    }
    pools.put(name, request.body().size().intValue());
    return pools.find(name).map(PoolResponse::of).orElseThrow();
  }
}
