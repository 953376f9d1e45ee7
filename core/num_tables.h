/* num_tables.h - powers of ten for core/num.c (scripts/gen-num-tables.py writes it: do
 * not edit)
 * SPDX-License-Identifier: MIT
 *
 * mem_num__pow5: 5^q, q in [-342, 308], 128-bit significands (high, low) for
 * Eisel-Lemire parsing. mem_num__g: g(k) = floor(10^-k 2^-r) + 1 in [2^125, 2^126),
 * k in [-324, 292], as two 63-bit halves (high, low) for Schubfach formatting. Only
 * core/num.c includes this file.
 */
#ifndef MEM_CORE_NUM_TABLES_H
#define MEM_CORE_NUM_TABLES_H

#include <stdint.h>

#define MEM_NUM__POW5_QMIN (-342)
#define MEM_NUM__POW5_QMAX 308
#define MEM_NUM__G_KMIN    (-324)
#define MEM_NUM__G_KMAX    292

static const uint64_t mem_num__pow5[651][2] = {
    {0xeef453d6923bd65au, 0x113faa2906a13b3fu}, /* 5^-342 */
    {0x9558b4661b6565f8u, 0x4ac7ca59a424c507u}, /* 5^-341 */
    {0xbaaee17fa23ebf76u, 0x5d79bcf00d2df649u}, /* 5^-340 */
    {0xe95a99df8ace6f53u, 0xf4d82c2c107973dcu}, /* 5^-339 */
    {0x91d8a02bb6c10594u, 0x79071b9b8a4be869u}, /* 5^-338 */
    {0xb64ec836a47146f9u, 0x9748e2826cdee284u}, /* 5^-337 */
    {0xe3e27a444d8d98b7u, 0xfd1b1b2308169b25u}, /* 5^-336 */
    {0x8e6d8c6ab0787f72u, 0xfe30f0f5e50e20f7u}, /* 5^-335 */
    {0xb208ef855c969f4fu, 0xbdbd2d335e51a935u}, /* 5^-334 */
    {0xde8b2b66b3bc4723u, 0xad2c788035e61382u}, /* 5^-333 */
    {0x8b16fb203055ac76u, 0x4c3bcb5021afcc31u}, /* 5^-332 */
    {0xaddcb9e83c6b1793u, 0xdf4abe242a1bbf3du}, /* 5^-331 */
    {0xd953e8624b85dd78u, 0xd71d6dad34a2af0du}, /* 5^-330 */
    {0x87d4713d6f33aa6bu, 0x8672648c40e5ad68u}, /* 5^-329 */
    {0xa9c98d8ccb009506u, 0x680efdaf511f18c2u}, /* 5^-328 */
    {0xd43bf0effdc0ba48u, 0x0212bd1b2566def2u}, /* 5^-327 */
    {0x84a57695fe98746du, 0x014bb630f7604b57u}, /* 5^-326 */
    {0xa5ced43b7e3e9188u, 0x419ea3bd35385e2du}, /* 5^-325 */
    {0xcf42894a5dce35eau, 0x52064cac828675b9u}, /* 5^-324 */
    {0x818995ce7aa0e1b2u, 0x7343efebd1940993u}, /* 5^-323 */
    {0xa1ebfb4219491a1fu, 0x1014ebe6c5f90bf8u}, /* 5^-322 */
    {0xca66fa129f9b60a6u, 0xd41a26e077774ef6u}, /* 5^-321 */
    {0xfd00b897478238d0u, 0x8920b098955522b4u}, /* 5^-320 */
    {0x9e20735e8cb16382u, 0x55b46e5f5d5535b0u}, /* 5^-319 */
    {0xc5a890362fddbc62u, 0xeb2189f734aa831du}, /* 5^-318 */
    {0xf712b443bbd52b7bu, 0xa5e9ec7501d523e4u}, /* 5^-317 */
    {0x9a6bb0aa55653b2du, 0x47b233c92125366eu}, /* 5^-316 */
    {0xc1069cd4eabe89f8u, 0x999ec0bb696e840au}, /* 5^-315 */
    {0xf148440a256e2c76u, 0xc00670ea43ca250du}, /* 5^-314 */
    {0x96cd2a865764dbcau, 0x380406926a5e5728u}, /* 5^-313 */
    {0xbc807527ed3e12bcu, 0xc605083704f5ecf2u}, /* 5^-312 */
    {0xeba09271e88d976bu, 0xf7864a44c633682eu}, /* 5^-311 */
    {0x93445b8731587ea3u, 0x7ab3ee6afbe0211du}, /* 5^-310 */
    {0xb8157268fdae9e4cu, 0x5960ea05bad82964u}, /* 5^-309 */
    {0xe61acf033d1a45dfu, 0x6fb92487298e33bdu}, /* 5^-308 */
    {0x8fd0c16206306babu, 0xa5d3b6d479f8e056u}, /* 5^-307 */
    {0xb3c4f1ba87bc8696u, 0x8f48a4899877186cu}, /* 5^-306 */
    {0xe0b62e2929aba83cu, 0x331acdabfe94de87u}, /* 5^-305 */
    {0x8c71dcd9ba0b4925u, 0x9ff0c08b7f1d0b14u}, /* 5^-304 */
    {0xaf8e5410288e1b6fu, 0x07ecf0ae5ee44dd9u}, /* 5^-303 */
    {0xdb71e91432b1a24au, 0xc9e82cd9f69d6150u}, /* 5^-302 */
    {0x892731ac9faf056eu, 0xbe311c083a225cd2u}, /* 5^-301 */
    {0xab70fe17c79ac6cau, 0x6dbd630a48aaf406u}, /* 5^-300 */
    {0xd64d3d9db981787du, 0x092cbbccdad5b108u}, /* 5^-299 */
    {0x85f0468293f0eb4eu, 0x25bbf56008c58ea5u}, /* 5^-298 */
    {0xa76c582338ed2621u, 0xaf2af2b80af6f24eu}, /* 5^-297 */
    {0xd1476e2c07286faau, 0x1af5af660db4aee1u}, /* 5^-296 */
    {0x82cca4db847945cau, 0x50d98d9fc890ed4du}, /* 5^-295 */
    {0xa37fce126597973cu, 0xe50ff107bab528a0u}, /* 5^-294 */
    {0xcc5fc196fefd7d0cu, 0x1e53ed49a96272c8u}, /* 5^-293 */
    {0xff77b1fcbebcdc4fu, 0x25e8e89c13bb0f7au}, /* 5^-292 */
    {0x9faacf3df73609b1u, 0x77b191618c54e9acu}, /* 5^-291 */
    {0xc795830d75038c1du, 0xd59df5b9ef6a2417u}, /* 5^-290 */
    {0xf97ae3d0d2446f25u, 0x4b0573286b44ad1du}, /* 5^-289 */
    {0x9becce62836ac577u, 0x4ee367f9430aec32u}, /* 5^-288 */
    {0xc2e801fb244576d5u, 0x229c41f793cda73fu}, /* 5^-287 */
    {0xf3a20279ed56d48au, 0x6b43527578c1110fu}, /* 5^-286 */
    {0x9845418c345644d6u, 0x830a13896b78aaa9u}, /* 5^-285 */
    {0xbe5691ef416bd60cu, 0x23cc986bc656d553u}, /* 5^-284 */
    {0xedec366b11c6cb8fu, 0x2cbfbe86b7ec8aa8u}, /* 5^-283 */
    {0x94b3a202eb1c3f39u, 0x7bf7d71432f3d6a9u}, /* 5^-282 */
    {0xb9e08a83a5e34f07u, 0xdaf5ccd93fb0cc53u}, /* 5^-281 */
    {0xe858ad248f5c22c9u, 0xd1b3400f8f9cff68u}, /* 5^-280 */
    {0x91376c36d99995beu, 0x23100809b9c21fa1u}, /* 5^-279 */
    {0xb58547448ffffb2du, 0xabd40a0c2832a78au}, /* 5^-278 */
    {0xe2e69915b3fff9f9u, 0x16c90c8f323f516cu}, /* 5^-277 */
    {0x8dd01fad907ffc3bu, 0xae3da7d97f6792e3u}, /* 5^-276 */
    {0xb1442798f49ffb4au, 0x99cd11cfdf41779cu}, /* 5^-275 */
    {0xdd95317f31c7fa1du, 0x40405643d711d583u}, /* 5^-274 */
    {0x8a7d3eef7f1cfc52u, 0x482835ea666b2572u}, /* 5^-273 */
    {0xad1c8eab5ee43b66u, 0xda3243650005eecfu}, /* 5^-272 */
    {0xd863b256369d4a40u, 0x90bed43e40076a82u}, /* 5^-271 */
    {0x873e4f75e2224e68u, 0x5a7744a6e804a291u}, /* 5^-270 */
    {0xa90de3535aaae202u, 0x711515d0a205cb36u}, /* 5^-269 */
    {0xd3515c2831559a83u, 0x0d5a5b44ca873e03u}, /* 5^-268 */
    {0x8412d9991ed58091u, 0xe858790afe9486c2u}, /* 5^-267 */
    {0xa5178fff668ae0b6u, 0x626e974dbe39a872u}, /* 5^-266 */
    {0xce5d73ff402d98e3u, 0xfb0a3d212dc8128fu}, /* 5^-265 */
    {0x80fa687f881c7f8eu, 0x7ce66634bc9d0b99u}, /* 5^-264 */
    {0xa139029f6a239f72u, 0x1c1fffc1ebc44e80u}, /* 5^-263 */
    {0xc987434744ac874eu, 0xa327ffb266b56220u}, /* 5^-262 */
    {0xfbe9141915d7a922u, 0x4bf1ff9f0062baa8u}, /* 5^-261 */
    {0x9d71ac8fada6c9b5u, 0x6f773fc3603db4a9u}, /* 5^-260 */
    {0xc4ce17b399107c22u, 0xcb550fb4384d21d3u}, /* 5^-259 */
    {0xf6019da07f549b2bu, 0x7e2a53a146606a48u}, /* 5^-258 */
    {0x99c102844f94e0fbu, 0x2eda7444cbfc426du}, /* 5^-257 */
    {0xc0314325637a1939u, 0xfa911155fefb5308u}, /* 5^-256 */
    {0xf03d93eebc589f88u, 0x793555ab7eba27cau}, /* 5^-255 */
    {0x96267c7535b763b5u, 0x4bc1558b2f3458deu}, /* 5^-254 */
    {0xbbb01b9283253ca2u, 0x9eb1aaedfb016f16u}, /* 5^-253 */
    {0xea9c227723ee8bcbu, 0x465e15a979c1cadcu}, /* 5^-252 */
    {0x92a1958a7675175fu, 0x0bfacd89ec191ec9u}, /* 5^-251 */
    {0xb749faed14125d36u, 0xcef980ec671f667bu}, /* 5^-250 */
    {0xe51c79a85916f484u, 0x82b7e12780e7401au}, /* 5^-249 */
    {0x8f31cc0937ae58d2u, 0xd1b2ecb8b0908810u}, /* 5^-248 */
    {0xb2fe3f0b8599ef07u, 0x861fa7e6dcb4aa15u}, /* 5^-247 */
    {0xdfbdcece67006ac9u, 0x67a791e093e1d49au}, /* 5^-246 */
    {0x8bd6a141006042bdu, 0xe0c8bb2c5c6d24e0u}, /* 5^-245 */
    {0xaecc49914078536du, 0x58fae9f773886e18u}, /* 5^-244 */
    {0xda7f5bf590966848u, 0xaf39a475506a899eu}, /* 5^-243 */
    {0x888f99797a5e012du, 0x6d8406c952429603u}, /* 5^-242 */
    {0xaab37fd7d8f58178u, 0xc8e5087ba6d33b83u}, /* 5^-241 */
    {0xd5605fcdcf32e1d6u, 0xfb1e4a9a90880a64u}, /* 5^-240 */
    {0x855c3be0a17fcd26u, 0x5cf2eea09a55067fu}, /* 5^-239 */
    {0xa6b34ad8c9dfc06fu, 0xf42faa48c0ea481eu}, /* 5^-238 */
    {0xd0601d8efc57b08bu, 0xf13b94daf124da26u}, /* 5^-237 */
    {0x823c12795db6ce57u, 0x76c53d08d6b70858u}, /* 5^-236 */
    {0xa2cb1717b52481edu, 0x54768c4b0c64ca6eu}, /* 5^-235 */
    {0xcb7ddcdda26da268u, 0xa9942f5dcf7dfd09u}, /* 5^-234 */
    {0xfe5d54150b090b02u, 0xd3f93b35435d7c4cu}, /* 5^-233 */
    {0x9efa548d26e5a6e1u, 0xc47bc5014a1a6dafu}, /* 5^-232 */
    {0xc6b8e9b0709f109au, 0x359ab6419ca1091bu}, /* 5^-231 */
    {0xf867241c8cc6d4c0u, 0xc30163d203c94b62u}, /* 5^-230 */
    {0x9b407691d7fc44f8u, 0x79e0de63425dcf1du}, /* 5^-229 */
    {0xc21094364dfb5636u, 0x985915fc12f542e4u}, /* 5^-228 */
    {0xf294b943e17a2bc4u, 0x3e6f5b7b17b2939du}, /* 5^-227 */
    {0x979cf3ca6cec5b5au, 0xa705992ceecf9c42u}, /* 5^-226 */
    {0xbd8430bd08277231u, 0x50c6ff782a838353u}, /* 5^-225 */
    {0xece53cec4a314ebdu, 0xa4f8bf5635246428u}, /* 5^-224 */
    {0x940f4613ae5ed136u, 0x871b7795e136be99u}, /* 5^-223 */
    {0xb913179899f68584u, 0x28e2557b59846e3fu}, /* 5^-222 */
    {0xe757dd7ec07426e5u, 0x331aeada2fe589cfu}, /* 5^-221 */
    {0x9096ea6f3848984fu, 0x3ff0d2c85def7621u}, /* 5^-220 */
    {0xb4bca50b065abe63u, 0x0fed077a756b53a9u}, /* 5^-219 */
    {0xe1ebce4dc7f16dfbu, 0xd3e8495912c62894u}, /* 5^-218 */
    {0x8d3360f09cf6e4bdu, 0x64712dd7abbbd95cu}, /* 5^-217 */
    {0xb080392cc4349decu, 0xbd8d794d96aacfb3u}, /* 5^-216 */
    {0xdca04777f541c567u, 0xecf0d7a0fc5583a0u}, /* 5^-215 */
    {0x89e42caaf9491b60u, 0xf41686c49db57244u}, /* 5^-214 */
    {0xac5d37d5b79b6239u, 0x311c2875c522ced5u}, /* 5^-213 */
    {0xd77485cb25823ac7u, 0x7d633293366b828bu}, /* 5^-212 */
    {0x86a8d39ef77164bcu, 0xae5dff9c02033197u}, /* 5^-211 */
    {0xa8530886b54dbdebu, 0xd9f57f830283fdfcu}, /* 5^-210 */
    {0xd267caa862a12d66u, 0xd072df63c324fd7bu}, /* 5^-209 */
    {0x8380dea93da4bc60u, 0x4247cb9e59f71e6du}, /* 5^-208 */
    {0xa46116538d0deb78u, 0x52d9be85f074e608u}, /* 5^-207 */
    {0xcd795be870516656u, 0x67902e276c921f8bu}, /* 5^-206 */
    {0x806bd9714632dff6u, 0x00ba1cd8a3db53b6u}, /* 5^-205 */
    {0xa086cfcd97bf97f3u, 0x80e8a40eccd228a4u}, /* 5^-204 */
    {0xc8a883c0fdaf7df0u, 0x6122cd128006b2cdu}, /* 5^-203 */
    {0xfad2a4b13d1b5d6cu, 0x796b805720085f81u}, /* 5^-202 */
    {0x9cc3a6eec6311a63u, 0xcbe3303674053bb0u}, /* 5^-201 */
    {0xc3f490aa77bd60fcu, 0xbedbfc4411068a9cu}, /* 5^-200 */
    {0xf4f1b4d515acb93bu, 0xee92fb5515482d44u}, /* 5^-199 */
    {0x991711052d8bf3c5u, 0x751bdd152d4d1c4au}, /* 5^-198 */
    {0xbf5cd54678eef0b6u, 0xd262d45a78a0635du}, /* 5^-197 */
    {0xef340a98172aace4u, 0x86fb897116c87c34u}, /* 5^-196 */
    {0x9580869f0e7aac0eu, 0xd45d35e6ae3d4da0u}, /* 5^-195 */
    {0xbae0a846d2195712u, 0x8974836059cca109u}, /* 5^-194 */
    {0xe998d258869facd7u, 0x2bd1a438703fc94bu}, /* 5^-193 */
    {0x91ff83775423cc06u, 0x7b6306a34627ddcfu}, /* 5^-192 */
    {0xb67f6455292cbf08u, 0x1a3bc84c17b1d542u}, /* 5^-191 */
    {0xe41f3d6a7377eecau, 0x20caba5f1d9e4a93u}, /* 5^-190 */
    {0x8e938662882af53eu, 0x547eb47b7282ee9cu}, /* 5^-189 */
    {0xb23867fb2a35b28du, 0xe99e619a4f23aa43u}, /* 5^-188 */
    {0xdec681f9f4c31f31u, 0x6405fa00e2ec94d4u}, /* 5^-187 */
    {0x8b3c113c38f9f37eu, 0xde83bc408dd3dd04u}, /* 5^-186 */
    {0xae0b158b4738705eu, 0x9624ab50b148d445u}, /* 5^-185 */
    {0xd98ddaee19068c76u, 0x3badd624dd9b0957u}, /* 5^-184 */
    {0x87f8a8d4cfa417c9u, 0xe54ca5d70a80e5d6u}, /* 5^-183 */
    {0xa9f6d30a038d1dbcu, 0x5e9fcf4ccd211f4cu}, /* 5^-182 */
    {0xd47487cc8470652bu, 0x7647c3200069671fu}, /* 5^-181 */
    {0x84c8d4dfd2c63f3bu, 0x29ecd9f40041e073u}, /* 5^-180 */
    {0xa5fb0a17c777cf09u, 0xf468107100525890u}, /* 5^-179 */
    {0xcf79cc9db955c2ccu, 0x7182148d4066eeb4u}, /* 5^-178 */
    {0x81ac1fe293d599bfu, 0xc6f14cd848405530u}, /* 5^-177 */
    {0xa21727db38cb002fu, 0xb8ada00e5a506a7cu}, /* 5^-176 */
    {0xca9cf1d206fdc03bu, 0xa6d90811f0e4851cu}, /* 5^-175 */
    {0xfd442e4688bd304au, 0x908f4a166d1da663u}, /* 5^-174 */
    {0x9e4a9cec15763e2eu, 0x9a598e4e043287feu}, /* 5^-173 */
    {0xc5dd44271ad3cdbau, 0x40eff1e1853f29fdu}, /* 5^-172 */
    {0xf7549530e188c128u, 0xd12bee59e68ef47cu}, /* 5^-171 */
    {0x9a94dd3e8cf578b9u, 0x82bb74f8301958ceu}, /* 5^-170 */
    {0xc13a148e3032d6e7u, 0xe36a52363c1faf01u}, /* 5^-169 */
    {0xf18899b1bc3f8ca1u, 0xdc44e6c3cb279ac1u}, /* 5^-168 */
    {0x96f5600f15a7b7e5u, 0x29ab103a5ef8c0b9u}, /* 5^-167 */
    {0xbcb2b812db11a5deu, 0x7415d448f6b6f0e7u}, /* 5^-166 */
    {0xebdf661791d60f56u, 0x111b495b3464ad21u}, /* 5^-165 */
    {0x936b9fcebb25c995u, 0xcab10dd900beec34u}, /* 5^-164 */
    {0xb84687c269ef3bfbu, 0x3d5d514f40eea742u}, /* 5^-163 */
    {0xe65829b3046b0afau, 0x0cb4a5a3112a5112u}, /* 5^-162 */
    {0x8ff71a0fe2c2e6dcu, 0x47f0e785eaba72abu}, /* 5^-161 */
    {0xb3f4e093db73a093u, 0x59ed216765690f56u}, /* 5^-160 */
    {0xe0f218b8d25088b8u, 0x306869c13ec3532cu}, /* 5^-159 */
    {0x8c974f7383725573u, 0x1e414218c73a13fbu}, /* 5^-158 */
    {0xafbd2350644eeacfu, 0xe5d1929ef90898fau}, /* 5^-157 */
    {0xdbac6c247d62a583u, 0xdf45f746b74abf39u}, /* 5^-156 */
    {0x894bc396ce5da772u, 0x6b8bba8c328eb783u}, /* 5^-155 */
    {0xab9eb47c81f5114fu, 0x066ea92f3f326564u}, /* 5^-154 */
    {0xd686619ba27255a2u, 0xc80a537b0efefebdu}, /* 5^-153 */
    {0x8613fd0145877585u, 0xbd06742ce95f5f36u}, /* 5^-152 */
    {0xa798fc4196e952e7u, 0x2c48113823b73704u}, /* 5^-151 */
    {0xd17f3b51fca3a7a0u, 0xf75a15862ca504c5u}, /* 5^-150 */
    {0x82ef85133de648c4u, 0x9a984d73dbe722fbu}, /* 5^-149 */
    {0xa3ab66580d5fdaf5u, 0xc13e60d0d2e0ebbau}, /* 5^-148 */
    {0xcc963fee10b7d1b3u, 0x318df905079926a8u}, /* 5^-147 */
    {0xffbbcfe994e5c61fu, 0xfdf17746497f7052u}, /* 5^-146 */
    {0x9fd561f1fd0f9bd3u, 0xfeb6ea8bedefa633u}, /* 5^-145 */
    {0xc7caba6e7c5382c8u, 0xfe64a52ee96b8fc0u}, /* 5^-144 */
    {0xf9bd690a1b68637bu, 0x3dfdce7aa3c673b0u}, /* 5^-143 */
    {0x9c1661a651213e2du, 0x06bea10ca65c084eu}, /* 5^-142 */
    {0xc31bfa0fe5698db8u, 0x486e494fcff30a62u}, /* 5^-141 */
    {0xf3e2f893dec3f126u, 0x5a89dba3c3efccfau}, /* 5^-140 */
    {0x986ddb5c6b3a76b7u, 0xf89629465a75e01cu}, /* 5^-139 */
    {0xbe89523386091465u, 0xf6bbb397f1135823u}, /* 5^-138 */
    {0xee2ba6c0678b597fu, 0x746aa07ded582e2cu}, /* 5^-137 */
    {0x94db483840b717efu, 0xa8c2a44eb4571cdcu}, /* 5^-136 */
    {0xba121a4650e4ddebu, 0x92f34d62616ce413u}, /* 5^-135 */
    {0xe896a0d7e51e1566u, 0x77b020baf9c81d17u}, /* 5^-134 */
    {0x915e2486ef32cd60u, 0x0ace1474dc1d122eu}, /* 5^-133 */
    {0xb5b5ada8aaff80b8u, 0x0d819992132456bau}, /* 5^-132 */
    {0xe3231912d5bf60e6u, 0x10e1fff697ed6c69u}, /* 5^-131 */
    {0x8df5efabc5979c8fu, 0xca8d3ffa1ef463c1u}, /* 5^-130 */
    {0xb1736b96b6fd83b3u, 0xbd308ff8a6b17cb2u}, /* 5^-129 */
    {0xddd0467c64bce4a0u, 0xac7cb3f6d05ddbdeu}, /* 5^-128 */
    {0x8aa22c0dbef60ee4u, 0x6bcdf07a423aa96bu}, /* 5^-127 */
    {0xad4ab7112eb3929du, 0x86c16c98d2c953c6u}, /* 5^-126 */
    {0xd89d64d57a607744u, 0xe871c7bf077ba8b7u}, /* 5^-125 */
    {0x87625f056c7c4a8bu, 0x11471cd764ad4972u}, /* 5^-124 */
    {0xa93af6c6c79b5d2du, 0xd598e40d3dd89bcfu}, /* 5^-123 */
    {0xd389b47879823479u, 0x4aff1d108d4ec2c3u}, /* 5^-122 */
    {0x843610cb4bf160cbu, 0xcedf722a585139bau}, /* 5^-121 */
    {0xa54394fe1eedb8feu, 0xc2974eb4ee658828u}, /* 5^-120 */
    {0xce947a3da6a9273eu, 0x733d226229feea32u}, /* 5^-119 */
    {0x811ccc668829b887u, 0x0806357d5a3f525fu}, /* 5^-118 */
    {0xa163ff802a3426a8u, 0xca07c2dcb0cf26f7u}, /* 5^-117 */
    {0xc9bcff6034c13052u, 0xfc89b393dd02f0b5u}, /* 5^-116 */
    {0xfc2c3f3841f17c67u, 0xbbac2078d443ace2u}, /* 5^-115 */
    {0x9d9ba7832936edc0u, 0xd54b944b84aa4c0du}, /* 5^-114 */
    {0xc5029163f384a931u, 0x0a9e795e65d4df11u}, /* 5^-113 */
    {0xf64335bcf065d37du, 0x4d4617b5ff4a16d5u}, /* 5^-112 */
    {0x99ea0196163fa42eu, 0x504bced1bf8e4e45u}, /* 5^-111 */
    {0xc06481fb9bcf8d39u, 0xe45ec2862f71e1d6u}, /* 5^-110 */
    {0xf07da27a82c37088u, 0x5d767327bb4e5a4cu}, /* 5^-109 */
    {0x964e858c91ba2655u, 0x3a6a07f8d510f86fu}, /* 5^-108 */
    {0xbbe226efb628afeau, 0x890489f70a55368bu}, /* 5^-107 */
    {0xeadab0aba3b2dbe5u, 0x2b45ac74ccea842eu}, /* 5^-106 */
    {0x92c8ae6b464fc96fu, 0x3b0b8bc90012929du}, /* 5^-105 */
    {0xb77ada0617e3bbcbu, 0x09ce6ebb40173744u}, /* 5^-104 */
    {0xe55990879ddcaabdu, 0xcc420a6a101d0515u}, /* 5^-103 */
    {0x8f57fa54c2a9eab6u, 0x9fa946824a12232du}, /* 5^-102 */
    {0xb32df8e9f3546564u, 0x47939822dc96abf9u}, /* 5^-101 */
    {0xdff9772470297ebdu, 0x59787e2b93bc56f7u}, /* 5^-100 */
    {0x8bfbea76c619ef36u, 0x57eb4edb3c55b65au}, /* 5^-99 */
    {0xaefae51477a06b03u, 0xede622920b6b23f1u}, /* 5^-98 */
    {0xdab99e59958885c4u, 0xe95fab368e45ecedu}, /* 5^-97 */
    {0x88b402f7fd75539bu, 0x11dbcb0218ebb414u}, /* 5^-96 */
    {0xaae103b5fcd2a881u, 0xd652bdc29f26a119u}, /* 5^-95 */
    {0xd59944a37c0752a2u, 0x4be76d3346f0495fu}, /* 5^-94 */
    {0x857fcae62d8493a5u, 0x6f70a4400c562ddbu}, /* 5^-93 */
    {0xa6dfbd9fb8e5b88eu, 0xcb4ccd500f6bb952u}, /* 5^-92 */
    {0xd097ad07a71f26b2u, 0x7e2000a41346a7a7u}, /* 5^-91 */
    {0x825ecc24c873782fu, 0x8ed400668c0c28c8u}, /* 5^-90 */
    {0xa2f67f2dfa90563bu, 0x728900802f0f32fau}, /* 5^-89 */
    {0xcbb41ef979346bcau, 0x4f2b40a03ad2ffb9u}, /* 5^-88 */
    {0xfea126b7d78186bcu, 0xe2f610c84987bfa8u}, /* 5^-87 */
    {0x9f24b832e6b0f436u, 0x0dd9ca7d2df4d7c9u}, /* 5^-86 */
    {0xc6ede63fa05d3143u, 0x91503d1c79720dbbu}, /* 5^-85 */
    {0xf8a95fcf88747d94u, 0x75a44c6397ce912au}, /* 5^-84 */
    {0x9b69dbe1b548ce7cu, 0xc986afbe3ee11abau}, /* 5^-83 */
    {0xc24452da229b021bu, 0xfbe85badce996168u}, /* 5^-82 */
    {0xf2d56790ab41c2a2u, 0xfae27299423fb9c3u}, /* 5^-81 */
    {0x97c560ba6b0919a5u, 0xdccd879fc967d41au}, /* 5^-80 */
    {0xbdb6b8e905cb600fu, 0x5400e987bbc1c920u}, /* 5^-79 */
    {0xed246723473e3813u, 0x290123e9aab23b68u}, /* 5^-78 */
    {0x9436c0760c86e30bu, 0xf9a0b6720aaf6521u}, /* 5^-77 */
    {0xb94470938fa89bceu, 0xf808e40e8d5b3e69u}, /* 5^-76 */
    {0xe7958cb87392c2c2u, 0xb60b1d1230b20e04u}, /* 5^-75 */
    {0x90bd77f3483bb9b9u, 0xb1c6f22b5e6f48c2u}, /* 5^-74 */
    {0xb4ecd5f01a4aa828u, 0x1e38aeb6360b1af3u}, /* 5^-73 */
    {0xe2280b6c20dd5232u, 0x25c6da63c38de1b0u}, /* 5^-72 */
    {0x8d590723948a535fu, 0x579c487e5a38ad0eu}, /* 5^-71 */
    {0xb0af48ec79ace837u, 0x2d835a9df0c6d851u}, /* 5^-70 */
    {0xdcdb1b2798182244u, 0xf8e431456cf88e65u}, /* 5^-69 */
    {0x8a08f0f8bf0f156bu, 0x1b8e9ecb641b58ffu}, /* 5^-68 */
    {0xac8b2d36eed2dac5u, 0xe272467e3d222f3fu}, /* 5^-67 */
    {0xd7adf884aa879177u, 0x5b0ed81dcc6abb0fu}, /* 5^-66 */
    {0x86ccbb52ea94baeau, 0x98e947129fc2b4e9u}, /* 5^-65 */
    {0xa87fea27a539e9a5u, 0x3f2398d747b36224u}, /* 5^-64 */
    {0xd29fe4b18e88640eu, 0x8eec7f0d19a03aadu}, /* 5^-63 */
    {0x83a3eeeef9153e89u, 0x1953cf68300424acu}, /* 5^-62 */
    {0xa48ceaaab75a8e2bu, 0x5fa8c3423c052dd7u}, /* 5^-61 */
    {0xcdb02555653131b6u, 0x3792f412cb06794du}, /* 5^-60 */
    {0x808e17555f3ebf11u, 0xe2bbd88bbee40bd0u}, /* 5^-59 */
    {0xa0b19d2ab70e6ed6u, 0x5b6aceaeae9d0ec4u}, /* 5^-58 */
    {0xc8de047564d20a8bu, 0xf245825a5a445275u}, /* 5^-57 */
    {0xfb158592be068d2eu, 0xeed6e2f0f0d56712u}, /* 5^-56 */
    {0x9ced737bb6c4183du, 0x55464dd69685606bu}, /* 5^-55 */
    {0xc428d05aa4751e4cu, 0xaa97e14c3c26b886u}, /* 5^-54 */
    {0xf53304714d9265dfu, 0xd53dd99f4b3066a8u}, /* 5^-53 */
    {0x993fe2c6d07b7fabu, 0xe546a8038efe4029u}, /* 5^-52 */
    {0xbf8fdb78849a5f96u, 0xde98520472bdd033u}, /* 5^-51 */
    {0xef73d256a5c0f77cu, 0x963e66858f6d4440u}, /* 5^-50 */
    {0x95a8637627989aadu, 0xdde7001379a44aa8u}, /* 5^-49 */
    {0xbb127c53b17ec159u, 0x5560c018580d5d52u}, /* 5^-48 */
    {0xe9d71b689dde71afu, 0xaab8f01e6e10b4a6u}, /* 5^-47 */
    {0x9226712162ab070du, 0xcab3961304ca70e8u}, /* 5^-46 */
    {0xb6b00d69bb55c8d1u, 0x3d607b97c5fd0d22u}, /* 5^-45 */
    {0xe45c10c42a2b3b05u, 0x8cb89a7db77c506au}, /* 5^-44 */
    {0x8eb98a7a9a5b04e3u, 0x77f3608e92adb242u}, /* 5^-43 */
    {0xb267ed1940f1c61cu, 0x55f038b237591ed3u}, /* 5^-42 */
    {0xdf01e85f912e37a3u, 0x6b6c46dec52f6688u}, /* 5^-41 */
    {0x8b61313bbabce2c6u, 0x2323ac4b3b3da015u}, /* 5^-40 */
    {0xae397d8aa96c1b77u, 0xabec975e0a0d081au}, /* 5^-39 */
    {0xd9c7dced53c72255u, 0x96e7bd358c904a21u}, /* 5^-38 */
    {0x881cea14545c7575u, 0x7e50d64177da2e54u}, /* 5^-37 */
    {0xaa242499697392d2u, 0xdde50bd1d5d0b9e9u}, /* 5^-36 */
    {0xd4ad2dbfc3d07787u, 0x955e4ec64b44e864u}, /* 5^-35 */
    {0x84ec3c97da624ab4u, 0xbd5af13bef0b113eu}, /* 5^-34 */
    {0xa6274bbdd0fadd61u, 0xecb1ad8aeacdd58eu}, /* 5^-33 */
    {0xcfb11ead453994bau, 0x67de18eda5814af2u}, /* 5^-32 */
    {0x81ceb32c4b43fcf4u, 0x80eacf948770ced7u}, /* 5^-31 */
    {0xa2425ff75e14fc31u, 0xa1258379a94d028du}, /* 5^-30 */
    {0xcad2f7f5359a3b3eu, 0x096ee45813a04330u}, /* 5^-29 */
    {0xfd87b5f28300ca0du, 0x8bca9d6e188853fcu}, /* 5^-28 */
    {0x9e74d1b791e07e48u, 0x775ea264cf55347eu}, /* 5^-27 */
    {0xc612062576589ddau, 0x95364afe032a819eu}, /* 5^-26 */
    {0xf79687aed3eec551u, 0x3a83ddbd83f52205u}, /* 5^-25 */
    {0x9abe14cd44753b52u, 0xc4926a9672793543u}, /* 5^-24 */
    {0xc16d9a0095928a27u, 0x75b7053c0f178294u}, /* 5^-23 */
    {0xf1c90080baf72cb1u, 0x5324c68b12dd6339u}, /* 5^-22 */
    {0x971da05074da7beeu, 0xd3f6fc16ebca5e04u}, /* 5^-21 */
    {0xbce5086492111aeau, 0x88f4bb1ca6bcf585u}, /* 5^-20 */
    {0xec1e4a7db69561a5u, 0x2b31e9e3d06c32e6u}, /* 5^-19 */
    {0x9392ee8e921d5d07u, 0x3aff322e62439fd0u}, /* 5^-18 */
    {0xb877aa3236a4b449u, 0x09befeb9fad487c3u}, /* 5^-17 */
    {0xe69594bec44de15bu, 0x4c2ebe687989a9b4u}, /* 5^-16 */
    {0x901d7cf73ab0acd9u, 0x0f9d37014bf60a11u}, /* 5^-15 */
    {0xb424dc35095cd80fu, 0x538484c19ef38c95u}, /* 5^-14 */
    {0xe12e13424bb40e13u, 0x2865a5f206b06fbau}, /* 5^-13 */
    {0x8cbccc096f5088cbu, 0xf93f87b7442e45d4u}, /* 5^-12 */
    {0xafebff0bcb24aafeu, 0xf78f69a51539d749u}, /* 5^-11 */
    {0xdbe6fecebdedd5beu, 0xb573440e5a884d1cu}, /* 5^-10 */
    {0x89705f4136b4a597u, 0x31680a88f8953031u}, /* 5^-9 */
    {0xabcc77118461cefcu, 0xfdc20d2b36ba7c3eu}, /* 5^-8 */
    {0xd6bf94d5e57a42bcu, 0x3d32907604691b4du}, /* 5^-7 */
    {0x8637bd05af6c69b5u, 0xa63f9a49c2c1b110u}, /* 5^-6 */
    {0xa7c5ac471b478423u, 0x0fcf80dc33721d54u}, /* 5^-5 */
    {0xd1b71758e219652bu, 0xd3c36113404ea4a9u}, /* 5^-4 */
    {0x83126e978d4fdf3bu, 0x645a1cac083126eau}, /* 5^-3 */
    {0xa3d70a3d70a3d70au, 0x3d70a3d70a3d70a4u}, /* 5^-2 */
    {0xccccccccccccccccu, 0xcccccccccccccccdu}, /* 5^-1 */
    {0x8000000000000000u, 0x0000000000000000u}, /* 5^0 */
    {0xa000000000000000u, 0x0000000000000000u}, /* 5^1 */
    {0xc800000000000000u, 0x0000000000000000u}, /* 5^2 */
    {0xfa00000000000000u, 0x0000000000000000u}, /* 5^3 */
    {0x9c40000000000000u, 0x0000000000000000u}, /* 5^4 */
    {0xc350000000000000u, 0x0000000000000000u}, /* 5^5 */
    {0xf424000000000000u, 0x0000000000000000u}, /* 5^6 */
    {0x9896800000000000u, 0x0000000000000000u}, /* 5^7 */
    {0xbebc200000000000u, 0x0000000000000000u}, /* 5^8 */
    {0xee6b280000000000u, 0x0000000000000000u}, /* 5^9 */
    {0x9502f90000000000u, 0x0000000000000000u}, /* 5^10 */
    {0xba43b74000000000u, 0x0000000000000000u}, /* 5^11 */
    {0xe8d4a51000000000u, 0x0000000000000000u}, /* 5^12 */
    {0x9184e72a00000000u, 0x0000000000000000u}, /* 5^13 */
    {0xb5e620f480000000u, 0x0000000000000000u}, /* 5^14 */
    {0xe35fa931a0000000u, 0x0000000000000000u}, /* 5^15 */
    {0x8e1bc9bf04000000u, 0x0000000000000000u}, /* 5^16 */
    {0xb1a2bc2ec5000000u, 0x0000000000000000u}, /* 5^17 */
    {0xde0b6b3a76400000u, 0x0000000000000000u}, /* 5^18 */
    {0x8ac7230489e80000u, 0x0000000000000000u}, /* 5^19 */
    {0xad78ebc5ac620000u, 0x0000000000000000u}, /* 5^20 */
    {0xd8d726b7177a8000u, 0x0000000000000000u}, /* 5^21 */
    {0x878678326eac9000u, 0x0000000000000000u}, /* 5^22 */
    {0xa968163f0a57b400u, 0x0000000000000000u}, /* 5^23 */
    {0xd3c21bcecceda100u, 0x0000000000000000u}, /* 5^24 */
    {0x84595161401484a0u, 0x0000000000000000u}, /* 5^25 */
    {0xa56fa5b99019a5c8u, 0x0000000000000000u}, /* 5^26 */
    {0xcecb8f27f4200f3au, 0x0000000000000000u}, /* 5^27 */
    {0x813f3978f8940984u, 0x4000000000000000u}, /* 5^28 */
    {0xa18f07d736b90be5u, 0x5000000000000000u}, /* 5^29 */
    {0xc9f2c9cd04674edeu, 0xa400000000000000u}, /* 5^30 */
    {0xfc6f7c4045812296u, 0x4d00000000000000u}, /* 5^31 */
    {0x9dc5ada82b70b59du, 0xf020000000000000u}, /* 5^32 */
    {0xc5371912364ce305u, 0x6c28000000000000u}, /* 5^33 */
    {0xf684df56c3e01bc6u, 0xc732000000000000u}, /* 5^34 */
    {0x9a130b963a6c115cu, 0x3c7f400000000000u}, /* 5^35 */
    {0xc097ce7bc90715b3u, 0x4b9f100000000000u}, /* 5^36 */
    {0xf0bdc21abb48db20u, 0x1e86d40000000000u}, /* 5^37 */
    {0x96769950b50d88f4u, 0x1314448000000000u}, /* 5^38 */
    {0xbc143fa4e250eb31u, 0x17d955a000000000u}, /* 5^39 */
    {0xeb194f8e1ae525fdu, 0x5dcfab0800000000u}, /* 5^40 */
    {0x92efd1b8d0cf37beu, 0x5aa1cae500000000u}, /* 5^41 */
    {0xb7abc627050305adu, 0xf14a3d9e40000000u}, /* 5^42 */
    {0xe596b7b0c643c719u, 0x6d9ccd05d0000000u}, /* 5^43 */
    {0x8f7e32ce7bea5c6fu, 0xe4820023a2000000u}, /* 5^44 */
    {0xb35dbf821ae4f38bu, 0xdda2802c8a800000u}, /* 5^45 */
    {0xe0352f62a19e306eu, 0xd50b2037ad200000u}, /* 5^46 */
    {0x8c213d9da502de45u, 0x4526f422cc340000u}, /* 5^47 */
    {0xaf298d050e4395d6u, 0x9670b12b7f410000u}, /* 5^48 */
    {0xdaf3f04651d47b4cu, 0x3c0cdd765f114000u}, /* 5^49 */
    {0x88d8762bf324cd0fu, 0xa5880a69fb6ac800u}, /* 5^50 */
    {0xab0e93b6efee0053u, 0x8eea0d047a457a00u}, /* 5^51 */
    {0xd5d238a4abe98068u, 0x72a4904598d6d880u}, /* 5^52 */
    {0x85a36366eb71f041u, 0x47a6da2b7f864750u}, /* 5^53 */
    {0xa70c3c40a64e6c51u, 0x999090b65f67d924u}, /* 5^54 */
    {0xd0cf4b50cfe20765u, 0xfff4b4e3f741cf6du}, /* 5^55 */
    {0x82818f1281ed449fu, 0xbff8f10e7a8921a4u}, /* 5^56 */
    {0xa321f2d7226895c7u, 0xaff72d52192b6a0du}, /* 5^57 */
    {0xcbea6f8ceb02bb39u, 0x9bf4f8a69f764490u}, /* 5^58 */
    {0xfee50b7025c36a08u, 0x02f236d04753d5b4u}, /* 5^59 */
    {0x9f4f2726179a2245u, 0x01d762422c946590u}, /* 5^60 */
    {0xc722f0ef9d80aad6u, 0x424d3ad2b7b97ef5u}, /* 5^61 */
    {0xf8ebad2b84e0d58bu, 0xd2e0898765a7deb2u}, /* 5^62 */
    {0x9b934c3b330c8577u, 0x63cc55f49f88eb2fu}, /* 5^63 */
    {0xc2781f49ffcfa6d5u, 0x3cbf6b71c76b25fbu}, /* 5^64 */
    {0xf316271c7fc3908au, 0x8bef464e3945ef7au}, /* 5^65 */
    {0x97edd871cfda3a56u, 0x97758bf0e3cbb5acu}, /* 5^66 */
    {0xbde94e8e43d0c8ecu, 0x3d52eeed1cbea317u}, /* 5^67 */
    {0xed63a231d4c4fb27u, 0x4ca7aaa863ee4bddu}, /* 5^68 */
    {0x945e455f24fb1cf8u, 0x8fe8caa93e74ef6au}, /* 5^69 */
    {0xb975d6b6ee39e436u, 0xb3e2fd538e122b44u}, /* 5^70 */
    {0xe7d34c64a9c85d44u, 0x60dbbca87196b616u}, /* 5^71 */
    {0x90e40fbeea1d3a4au, 0xbc8955e946fe31cdu}, /* 5^72 */
    {0xb51d13aea4a488ddu, 0x6babab6398bdbe41u}, /* 5^73 */
    {0xe264589a4dcdab14u, 0xc696963c7eed2dd1u}, /* 5^74 */
    {0x8d7eb76070a08aecu, 0xfc1e1de5cf543ca2u}, /* 5^75 */
    {0xb0de65388cc8ada8u, 0x3b25a55f43294bcbu}, /* 5^76 */
    {0xdd15fe86affad912u, 0x49ef0eb713f39ebeu}, /* 5^77 */
    {0x8a2dbf142dfcc7abu, 0x6e3569326c784337u}, /* 5^78 */
    {0xacb92ed9397bf996u, 0x49c2c37f07965404u}, /* 5^79 */
    {0xd7e77a8f87daf7fbu, 0xdc33745ec97be906u}, /* 5^80 */
    {0x86f0ac99b4e8dafdu, 0x69a028bb3ded71a3u}, /* 5^81 */
    {0xa8acd7c0222311bcu, 0xc40832ea0d68ce0cu}, /* 5^82 */
    {0xd2d80db02aabd62bu, 0xf50a3fa490c30190u}, /* 5^83 */
    {0x83c7088e1aab65dbu, 0x792667c6da79e0fau}, /* 5^84 */
    {0xa4b8cab1a1563f52u, 0x577001b891185938u}, /* 5^85 */
    {0xcde6fd5e09abcf26u, 0xed4c0226b55e6f86u}, /* 5^86 */
    {0x80b05e5ac60b6178u, 0x544f8158315b05b4u}, /* 5^87 */
    {0xa0dc75f1778e39d6u, 0x696361ae3db1c721u}, /* 5^88 */
    {0xc913936dd571c84cu, 0x03bc3a19cd1e38e9u}, /* 5^89 */
    {0xfb5878494ace3a5fu, 0x04ab48a04065c723u}, /* 5^90 */
    {0x9d174b2dcec0e47bu, 0x62eb0d64283f9c76u}, /* 5^91 */
    {0xc45d1df942711d9au, 0x3ba5d0bd324f8394u}, /* 5^92 */
    {0xf5746577930d6500u, 0xca8f44ec7ee36479u}, /* 5^93 */
    {0x9968bf6abbe85f20u, 0x7e998b13cf4e1ecbu}, /* 5^94 */
    {0xbfc2ef456ae276e8u, 0x9e3fedd8c321a67eu}, /* 5^95 */
    {0xefb3ab16c59b14a2u, 0xc5cfe94ef3ea101eu}, /* 5^96 */
    {0x95d04aee3b80ece5u, 0xbba1f1d158724a12u}, /* 5^97 */
    {0xbb445da9ca61281fu, 0x2a8a6e45ae8edc97u}, /* 5^98 */
    {0xea1575143cf97226u, 0xf52d09d71a3293bdu}, /* 5^99 */
    {0x924d692ca61be758u, 0x593c2626705f9c56u}, /* 5^100 */
    {0xb6e0c377cfa2e12eu, 0x6f8b2fb00c77836cu}, /* 5^101 */
    {0xe498f455c38b997au, 0x0b6dfb9c0f956447u}, /* 5^102 */
    {0x8edf98b59a373fecu, 0x4724bd4189bd5eacu}, /* 5^103 */
    {0xb2977ee300c50fe7u, 0x58edec91ec2cb657u}, /* 5^104 */
    {0xdf3d5e9bc0f653e1u, 0x2f2967b66737e3edu}, /* 5^105 */
    {0x8b865b215899f46cu, 0xbd79e0d20082ee74u}, /* 5^106 */
    {0xae67f1e9aec07187u, 0xecd8590680a3aa11u}, /* 5^107 */
    {0xda01ee641a708de9u, 0xe80e6f4820cc9495u}, /* 5^108 */
    {0x884134fe908658b2u, 0x3109058d147fdcddu}, /* 5^109 */
    {0xaa51823e34a7eedeu, 0xbd4b46f0599fd415u}, /* 5^110 */
    {0xd4e5e2cdc1d1ea96u, 0x6c9e18ac7007c91au}, /* 5^111 */
    {0x850fadc09923329eu, 0x03e2cf6bc604ddb0u}, /* 5^112 */
    {0xa6539930bf6bff45u, 0x84db8346b786151cu}, /* 5^113 */
    {0xcfe87f7cef46ff16u, 0xe612641865679a63u}, /* 5^114 */
    {0x81f14fae158c5f6eu, 0x4fcb7e8f3f60c07eu}, /* 5^115 */
    {0xa26da3999aef7749u, 0xe3be5e330f38f09du}, /* 5^116 */
    {0xcb090c8001ab551cu, 0x5cadf5bfd3072cc5u}, /* 5^117 */
    {0xfdcb4fa002162a63u, 0x73d9732fc7c8f7f6u}, /* 5^118 */
    {0x9e9f11c4014dda7eu, 0x2867e7fddcdd9afau}, /* 5^119 */
    {0xc646d63501a1511du, 0xb281e1fd541501b8u}, /* 5^120 */
    {0xf7d88bc24209a565u, 0x1f225a7ca91a4226u}, /* 5^121 */
    {0x9ae757596946075fu, 0x3375788de9b06958u}, /* 5^122 */
    {0xc1a12d2fc3978937u, 0x0052d6b1641c83aeu}, /* 5^123 */
    {0xf209787bb47d6b84u, 0xc0678c5dbd23a49au}, /* 5^124 */
    {0x9745eb4d50ce6332u, 0xf840b7ba963646e0u}, /* 5^125 */
    {0xbd176620a501fbffu, 0xb650e5a93bc3d898u}, /* 5^126 */
    {0xec5d3fa8ce427affu, 0xa3e51f138ab4cebeu}, /* 5^127 */
    {0x93ba47c980e98cdfu, 0xc66f336c36b10137u}, /* 5^128 */
    {0xb8a8d9bbe123f017u, 0xb80b0047445d4184u}, /* 5^129 */
    {0xe6d3102ad96cec1du, 0xa60dc059157491e5u}, /* 5^130 */
    {0x9043ea1ac7e41392u, 0x87c89837ad68db2fu}, /* 5^131 */
    {0xb454e4a179dd1877u, 0x29babe4598c311fbu}, /* 5^132 */
    {0xe16a1dc9d8545e94u, 0xf4296dd6fef3d67au}, /* 5^133 */
    {0x8ce2529e2734bb1du, 0x1899e4a65f58660cu}, /* 5^134 */
    {0xb01ae745b101e9e4u, 0x5ec05dcff72e7f8fu}, /* 5^135 */
    {0xdc21a1171d42645du, 0x76707543f4fa1f73u}, /* 5^136 */
    {0x899504ae72497ebau, 0x6a06494a791c53a8u}, /* 5^137 */
    {0xabfa45da0edbde69u, 0x0487db9d17636892u}, /* 5^138 */
    {0xd6f8d7509292d603u, 0x45a9d2845d3c42b6u}, /* 5^139 */
    {0x865b86925b9bc5c2u, 0x0b8a2392ba45a9b2u}, /* 5^140 */
    {0xa7f26836f282b732u, 0x8e6cac7768d7141eu}, /* 5^141 */
    {0xd1ef0244af2364ffu, 0x3207d795430cd926u}, /* 5^142 */
    {0x8335616aed761f1fu, 0x7f44e6bd49e807b8u}, /* 5^143 */
    {0xa402b9c5a8d3a6e7u, 0x5f16206c9c6209a6u}, /* 5^144 */
    {0xcd036837130890a1u, 0x36dba887c37a8c0fu}, /* 5^145 */
    {0x802221226be55a64u, 0xc2494954da2c9789u}, /* 5^146 */
    {0xa02aa96b06deb0fdu, 0xf2db9baa10b7bd6cu}, /* 5^147 */
    {0xc83553c5c8965d3du, 0x6f92829494e5acc7u}, /* 5^148 */
    {0xfa42a8b73abbf48cu, 0xcb772339ba1f17f9u}, /* 5^149 */
    {0x9c69a97284b578d7u, 0xff2a760414536efbu}, /* 5^150 */
    {0xc38413cf25e2d70du, 0xfef5138519684abau}, /* 5^151 */
    {0xf46518c2ef5b8cd1u, 0x7eb258665fc25d69u}, /* 5^152 */
    {0x98bf2f79d5993802u, 0xef2f773ffbd97a61u}, /* 5^153 */
    {0xbeeefb584aff8603u, 0xaafb550ffacfd8fau}, /* 5^154 */
    {0xeeaaba2e5dbf6784u, 0x95ba2a53f983cf38u}, /* 5^155 */
    {0x952ab45cfa97a0b2u, 0xdd945a747bf26183u}, /* 5^156 */
    {0xba756174393d88dfu, 0x94f971119aeef9e4u}, /* 5^157 */
    {0xe912b9d1478ceb17u, 0x7a37cd5601aab85du}, /* 5^158 */
    {0x91abb422ccb812eeu, 0xac62e055c10ab33au}, /* 5^159 */
    {0xb616a12b7fe617aau, 0x577b986b314d6009u}, /* 5^160 */
    {0xe39c49765fdf9d94u, 0xed5a7e85fda0b80bu}, /* 5^161 */
    {0x8e41ade9fbebc27du, 0x14588f13be847307u}, /* 5^162 */
    {0xb1d219647ae6b31cu, 0x596eb2d8ae258fc8u}, /* 5^163 */
    {0xde469fbd99a05fe3u, 0x6fca5f8ed9aef3bbu}, /* 5^164 */
    {0x8aec23d680043beeu, 0x25de7bb9480d5854u}, /* 5^165 */
    {0xada72ccc20054ae9u, 0xaf561aa79a10ae6au}, /* 5^166 */
    {0xd910f7ff28069da4u, 0x1b2ba1518094da04u}, /* 5^167 */
    {0x87aa9aff79042286u, 0x90fb44d2f05d0842u}, /* 5^168 */
    {0xa99541bf57452b28u, 0x353a1607ac744a53u}, /* 5^169 */
    {0xd3fa922f2d1675f2u, 0x42889b8997915ce8u}, /* 5^170 */
    {0x847c9b5d7c2e09b7u, 0x69956135febada11u}, /* 5^171 */
    {0xa59bc234db398c25u, 0x43fab9837e699095u}, /* 5^172 */
    {0xcf02b2c21207ef2eu, 0x94f967e45e03f4bbu}, /* 5^173 */
    {0x8161afb94b44f57du, 0x1d1be0eebac278f5u}, /* 5^174 */
    {0xa1ba1ba79e1632dcu, 0x6462d92a69731732u}, /* 5^175 */
    {0xca28a291859bbf93u, 0x7d7b8f7503cfdcfeu}, /* 5^176 */
    {0xfcb2cb35e702af78u, 0x5cda735244c3d43eu}, /* 5^177 */
    {0x9defbf01b061adabu, 0x3a0888136afa64a7u}, /* 5^178 */
    {0xc56baec21c7a1916u, 0x088aaa1845b8fdd0u}, /* 5^179 */
    {0xf6c69a72a3989f5bu, 0x8aad549e57273d45u}, /* 5^180 */
    {0x9a3c2087a63f6399u, 0x36ac54e2f678864bu}, /* 5^181 */
    {0xc0cb28a98fcf3c7fu, 0x84576a1bb416a7ddu}, /* 5^182 */
    {0xf0fdf2d3f3c30b9fu, 0x656d44a2a11c51d5u}, /* 5^183 */
    {0x969eb7c47859e743u, 0x9f644ae5a4b1b325u}, /* 5^184 */
    {0xbc4665b596706114u, 0x873d5d9f0dde1feeu}, /* 5^185 */
    {0xeb57ff22fc0c7959u, 0xa90cb506d155a7eau}, /* 5^186 */
    {0x9316ff75dd87cbd8u, 0x09a7f12442d588f2u}, /* 5^187 */
    {0xb7dcbf5354e9beceu, 0x0c11ed6d538aeb2fu}, /* 5^188 */
    {0xe5d3ef282a242e81u, 0x8f1668c8a86da5fau}, /* 5^189 */
    {0x8fa475791a569d10u, 0xf96e017d694487bcu}, /* 5^190 */
    {0xb38d92d760ec4455u, 0x37c981dcc395a9acu}, /* 5^191 */
    {0xe070f78d3927556au, 0x85bbe253f47b1417u}, /* 5^192 */
    {0x8c469ab843b89562u, 0x93956d7478ccec8eu}, /* 5^193 */
    {0xaf58416654a6babbu, 0x387ac8d1970027b2u}, /* 5^194 */
    {0xdb2e51bfe9d0696au, 0x06997b05fcc0319eu}, /* 5^195 */
    {0x88fcf317f22241e2u, 0x441fece3bdf81f03u}, /* 5^196 */
    {0xab3c2fddeeaad25au, 0xd527e81cad7626c3u}, /* 5^197 */
    {0xd60b3bd56a5586f1u, 0x8a71e223d8d3b074u}, /* 5^198 */
    {0x85c7056562757456u, 0xf6872d5667844e49u}, /* 5^199 */
    {0xa738c6bebb12d16cu, 0xb428f8ac016561dbu}, /* 5^200 */
    {0xd106f86e69d785c7u, 0xe13336d701beba52u}, /* 5^201 */
    {0x82a45b450226b39cu, 0xecc0024661173473u}, /* 5^202 */
    {0xa34d721642b06084u, 0x27f002d7f95d0190u}, /* 5^203 */
    {0xcc20ce9bd35c78a5u, 0x31ec038df7b441f4u}, /* 5^204 */
    {0xff290242c83396ceu, 0x7e67047175a15271u}, /* 5^205 */
    {0x9f79a169bd203e41u, 0x0f0062c6e984d386u}, /* 5^206 */
    {0xc75809c42c684dd1u, 0x52c07b78a3e60868u}, /* 5^207 */
    {0xf92e0c3537826145u, 0xa7709a56ccdf8a82u}, /* 5^208 */
    {0x9bbcc7a142b17ccbu, 0x88a66076400bb691u}, /* 5^209 */
    {0xc2abf989935ddbfeu, 0x6acff893d00ea435u}, /* 5^210 */
    {0xf356f7ebf83552feu, 0x0583f6b8c4124d43u}, /* 5^211 */
    {0x98165af37b2153deu, 0xc3727a337a8b704au}, /* 5^212 */
    {0xbe1bf1b059e9a8d6u, 0x744f18c0592e4c5cu}, /* 5^213 */
    {0xeda2ee1c7064130cu, 0x1162def06f79df73u}, /* 5^214 */
    {0x9485d4d1c63e8be7u, 0x8addcb5645ac2ba8u}, /* 5^215 */
    {0xb9a74a0637ce2ee1u, 0x6d953e2bd7173692u}, /* 5^216 */
    {0xe8111c87c5c1ba99u, 0xc8fa8db6ccdd0437u}, /* 5^217 */
    {0x910ab1d4db9914a0u, 0x1d9c9892400a22a2u}, /* 5^218 */
    {0xb54d5e4a127f59c8u, 0x2503beb6d00cab4bu}, /* 5^219 */
    {0xe2a0b5dc971f303au, 0x2e44ae64840fd61du}, /* 5^220 */
    {0x8da471a9de737e24u, 0x5ceaecfed289e5d2u}, /* 5^221 */
    {0xb10d8e1456105dadu, 0x7425a83e872c5f47u}, /* 5^222 */
    {0xdd50f1996b947518u, 0xd12f124e28f77719u}, /* 5^223 */
    {0x8a5296ffe33cc92fu, 0x82bd6b70d99aaa6fu}, /* 5^224 */
    {0xace73cbfdc0bfb7bu, 0x636cc64d1001550bu}, /* 5^225 */
    {0xd8210befd30efa5au, 0x3c47f7e05401aa4eu}, /* 5^226 */
    {0x8714a775e3e95c78u, 0x65acfaec34810a71u}, /* 5^227 */
    {0xa8d9d1535ce3b396u, 0x7f1839a741a14d0du}, /* 5^228 */
    {0xd31045a8341ca07cu, 0x1ede48111209a050u}, /* 5^229 */
    {0x83ea2b892091e44du, 0x934aed0aab460432u}, /* 5^230 */
    {0xa4e4b66b68b65d60u, 0xf81da84d5617853fu}, /* 5^231 */
    {0xce1de40642e3f4b9u, 0x36251260ab9d668eu}, /* 5^232 */
    {0x80d2ae83e9ce78f3u, 0xc1d72b7c6b426019u}, /* 5^233 */
    {0xa1075a24e4421730u, 0xb24cf65b8612f81fu}, /* 5^234 */
    {0xc94930ae1d529cfcu, 0xdee033f26797b627u}, /* 5^235 */
    {0xfb9b7cd9a4a7443cu, 0x169840ef017da3b1u}, /* 5^236 */
    {0x9d412e0806e88aa5u, 0x8e1f289560ee864eu}, /* 5^237 */
    {0xc491798a08a2ad4eu, 0xf1a6f2bab92a27e2u}, /* 5^238 */
    {0xf5b5d7ec8acb58a2u, 0xae10af696774b1dbu}, /* 5^239 */
    {0x9991a6f3d6bf1765u, 0xacca6da1e0a8ef29u}, /* 5^240 */
    {0xbff610b0cc6edd3fu, 0x17fd090a58d32af3u}, /* 5^241 */
    {0xeff394dcff8a948eu, 0xddfc4b4cef07f5b0u}, /* 5^242 */
    {0x95f83d0a1fb69cd9u, 0x4abdaf101564f98eu}, /* 5^243 */
    {0xbb764c4ca7a4440fu, 0x9d6d1ad41abe37f1u}, /* 5^244 */
    {0xea53df5fd18d5513u, 0x84c86189216dc5edu}, /* 5^245 */
    {0x92746b9be2f8552cu, 0x32fd3cf5b4e49bb4u}, /* 5^246 */
    {0xb7118682dbb66a77u, 0x3fbc8c33221dc2a1u}, /* 5^247 */
    {0xe4d5e82392a40515u, 0x0fabaf3feaa5334au}, /* 5^248 */
    {0x8f05b1163ba6832du, 0x29cb4d87f2a7400eu}, /* 5^249 */
    {0xb2c71d5bca9023f8u, 0x743e20e9ef511012u}, /* 5^250 */
    {0xdf78e4b2bd342cf6u, 0x914da9246b255416u}, /* 5^251 */
    {0x8bab8eefb6409c1au, 0x1ad089b6c2f7548eu}, /* 5^252 */
    {0xae9672aba3d0c320u, 0xa184ac2473b529b1u}, /* 5^253 */
    {0xda3c0f568cc4f3e8u, 0xc9e5d72d90a2741eu}, /* 5^254 */
    {0x8865899617fb1871u, 0x7e2fa67c7a658892u}, /* 5^255 */
    {0xaa7eebfb9df9de8du, 0xddbb901b98feeab7u}, /* 5^256 */
    {0xd51ea6fa85785631u, 0x552a74227f3ea565u}, /* 5^257 */
    {0x8533285c936b35deu, 0xd53a88958f87275fu}, /* 5^258 */
    {0xa67ff273b8460356u, 0x8a892abaf368f137u}, /* 5^259 */
    {0xd01fef10a657842cu, 0x2d2b7569b0432d85u}, /* 5^260 */
    {0x8213f56a67f6b29bu, 0x9c3b29620e29fc73u}, /* 5^261 */
    {0xa298f2c501f45f42u, 0x8349f3ba91b47b8fu}, /* 5^262 */
    {0xcb3f2f7642717713u, 0x241c70a936219a73u}, /* 5^263 */
    {0xfe0efb53d30dd4d7u, 0xed238cd383aa0110u}, /* 5^264 */
    {0x9ec95d1463e8a506u, 0xf4363804324a40aau}, /* 5^265 */
    {0xc67bb4597ce2ce48u, 0xb143c6053edcd0d5u}, /* 5^266 */
    {0xf81aa16fdc1b81dau, 0xdd94b7868e94050au}, /* 5^267 */
    {0x9b10a4e5e9913128u, 0xca7cf2b4191c8326u}, /* 5^268 */
    {0xc1d4ce1f63f57d72u, 0xfd1c2f611f63a3f0u}, /* 5^269 */
    {0xf24a01a73cf2dccfu, 0xbc633b39673c8cecu}, /* 5^270 */
    {0x976e41088617ca01u, 0xd5be0503e085d813u}, /* 5^271 */
    {0xbd49d14aa79dbc82u, 0x4b2d8644d8a74e18u}, /* 5^272 */
    {0xec9c459d51852ba2u, 0xddf8e7d60ed1219eu}, /* 5^273 */
    {0x93e1ab8252f33b45u, 0xcabb90e5c942b503u}, /* 5^274 */
    {0xb8da1662e7b00a17u, 0x3d6a751f3b936243u}, /* 5^275 */
    {0xe7109bfba19c0c9du, 0x0cc512670a783ad4u}, /* 5^276 */
    {0x906a617d450187e2u, 0x27fb2b80668b24c5u}, /* 5^277 */
    {0xb484f9dc9641e9dau, 0xb1f9f660802dedf6u}, /* 5^278 */
    {0xe1a63853bbd26451u, 0x5e7873f8a0396973u}, /* 5^279 */
    {0x8d07e33455637eb2u, 0xdb0b487b6423e1e8u}, /* 5^280 */
    {0xb049dc016abc5e5fu, 0x91ce1a9a3d2cda62u}, /* 5^281 */
    {0xdc5c5301c56b75f7u, 0x7641a140cc7810fbu}, /* 5^282 */
    {0x89b9b3e11b6329bau, 0xa9e904c87fcb0a9du}, /* 5^283 */
    {0xac2820d9623bf429u, 0x546345fa9fbdcd44u}, /* 5^284 */
    {0xd732290fbacaf133u, 0xa97c177947ad4095u}, /* 5^285 */
    {0x867f59a9d4bed6c0u, 0x49ed8eabcccc485du}, /* 5^286 */
    {0xa81f301449ee8c70u, 0x5c68f256bfff5a74u}, /* 5^287 */
    {0xd226fc195c6a2f8cu, 0x73832eec6fff3111u}, /* 5^288 */
    {0x83585d8fd9c25db7u, 0xc831fd53c5ff7eabu}, /* 5^289 */
    {0xa42e74f3d032f525u, 0xba3e7ca8b77f5e55u}, /* 5^290 */
    {0xcd3a1230c43fb26fu, 0x28ce1bd2e55f35ebu}, /* 5^291 */
    {0x80444b5e7aa7cf85u, 0x7980d163cf5b81b3u}, /* 5^292 */
    {0xa0555e361951c366u, 0xd7e105bcc332621fu}, /* 5^293 */
    {0xc86ab5c39fa63440u, 0x8dd9472bf3fefaa7u}, /* 5^294 */
    {0xfa856334878fc150u, 0xb14f98f6f0feb951u}, /* 5^295 */
    {0x9c935e00d4b9d8d2u, 0x6ed1bf9a569f33d3u}, /* 5^296 */
    {0xc3b8358109e84f07u, 0x0a862f80ec4700c8u}, /* 5^297 */
    {0xf4a642e14c6262c8u, 0xcd27bb612758c0fau}, /* 5^298 */
    {0x98e7e9cccfbd7dbdu, 0x8038d51cb897789cu}, /* 5^299 */
    {0xbf21e44003acdd2cu, 0xe0470a63e6bd56c3u}, /* 5^300 */
    {0xeeea5d5004981478u, 0x1858ccfce06cac74u}, /* 5^301 */
    {0x95527a5202df0ccbu, 0x0f37801e0c43ebc8u}, /* 5^302 */
    {0xbaa718e68396cffdu, 0xd30560258f54e6bau}, /* 5^303 */
    {0xe950df20247c83fdu, 0x47c6b82ef32a2069u}, /* 5^304 */
    {0x91d28b7416cdd27eu, 0x4cdc331d57fa5441u}, /* 5^305 */
    {0xb6472e511c81471du, 0xe0133fe4adf8e952u}, /* 5^306 */
    {0xe3d8f9e563a198e5u, 0x58180fddd97723a6u}, /* 5^307 */
    {0x8e679c2f5e44ff8fu, 0x570f09eaa7ea7648u}, /* 5^308 */
};

static const uint64_t mem_num__g[617][2] = {
    {0x4f0cedc95a718dd4u, 0x5b01e8b09aa0d1b5u}, /* k = -324 */
    {0x7e7b160ef71c1621u, 0x119ca780f767b5eeu}, /* k = -323 */
    {0x652f44d8c5b011b4u, 0x0e16ec672c52f7f2u}, /* k = -322 */
    {0x50f29d7a37c00e29u, 0x581256b8f0425ff5u}, /* k = -321 */
    {0x40c21794f96671bau, 0x79a84560c0351991u}, /* k = -320 */
    {0x679cf287f570b5f7u, 0x75da089acd21c281u}, /* k = -319 */
    {0x52e3f5399126f7f9u, 0x44ae6d48a41b0201u}, /* k = -318 */
    {0x424ff76140ebf994u, 0x36f1f106e9af34cdu}, /* k = -317 */
    {0x6a198bcece465c20u, 0x57e981a4a918547bu}, /* k = -316 */
    {0x54e13ca571d1e34du, 0x2cbace1d541376c9u}, /* k = -315 */
    {0x43e763b78e4182a4u, 0x23c8a4e44342c56eu}, /* k = -314 */
    {0x6ca56c58e39c043au, 0x060dd4a06b9e08b0u}, /* k = -313 */
    {0x56eabd13e9499cfbu, 0x1e7176e6bc7e6d59u}, /* k = -312 */
    {0x458897432107b0c8u, 0x7ec12bebc9febde1u}, /* k = -311 */
    {0x6f40f20501a5e7a7u, 0x7e01dfdfa9979635u}, /* k = -310 */
    {0x5900c19d9aeb1fb9u, 0x4b34b319547944f7u}, /* k = -309 */
    {0x4733ce17af227fc7u, 0x55c3c27aa9fa9d93u}, /* k = -308 */
    {0x71ec7cf2b1d0cc72u, 0x560603f7765dc8eau}, /* k = -307 */
    {0x5b2397288e40a38eu, 0x7804cff92b7e3a55u}, /* k = -306 */
    {0x48e945ba0b66e93fu, 0x13370cc755fe9511u}, /* k = -305 */
    {0x74a86f90123e41feu, 0x51f1ae0bbcca881bu}, /* k = -304 */
    {0x5d538c7341cb67feu, 0x74c1580963d539afu}, /* k = -303 */
    {0x4aa93d29016f8665u, 0x43cde0078310faf3u}, /* k = -302 */
    {0x77752ea8024c0a3cu, 0x0616333f381b2b1eu}, /* k = -301 */
    {0x5f90f22001d66e96u, 0x3811c298f9af55b1u}, /* k = -300 */
    {0x4c73f4e667debedeu, 0x600e35472e25de28u}, /* k = -299 */
    {0x7a532170a6313164u, 0x3349eed849d6303fu}, /* k = -298 */
    {0x61dc1ac084f42783u, 0x42a18be03b11c033u}, /* k = -297 */
    {0x4e49af006a5cec69u, 0x1bb46fe695a7ccf5u}, /* k = -296 */
    {0x7d42b19a43c7e0a8u, 0x2c53e63dbc3fae55u}, /* k = -295 */
    {0x64355ae1cfd31a20u, 0x237651cafcffbeaau}, /* k = -294 */
    {0x502aaf1b0ca8e1b3u, 0x35f8416f30cc9888u}, /* k = -293 */
    {0x402225af3d53e7c2u, 0x5e603458f3d6e06du}, /* k = -292 */
    {0x669d0918621fd937u, 0x4a3386f4b957cd7bu}, /* k = -291 */
    {0x52173a79e8197a92u, 0x6e8f9f2a2ddfd796u}, /* k = -290 */
    {0x41ac2ec7ece12edbu, 0x720c7f54f17fdfabu}, /* k = -289 */
    {0x69137e0cae3517c6u, 0x1ce0cbbb1bffcc45u}, /* k = -288 */
    {0x540f980a24f74638u, 0x171a3c95afffd69eu}, /* k = -287 */
    {0x433facd4ea5f6b60u, 0x127b63aaf3331218u}, /* k = -286 */
    {0x6b991487dd657899u, 0x6a5f05de51eb5026u}, /* k = -285 */
    {0x5614106cb11dfa14u, 0x5518d17ea7ef7352u}, /* k = -284 */
    {0x44dcd9f08db194ddu, 0x2a7a41321ff2c2a8u}, /* k = -283 */
    {0x6e2e2980e2b5bafbu, 0x5d906850331e043fu}, /* k = -282 */
    {0x5824ee00b55e2f2fu, 0x647386a68f4b3699u}, /* k = -281 */
    {0x4683f19a2ab1bf59u, 0x36c2d21ed908f87bu}, /* k = -280 */
    {0x70d31c29dde93228u, 0x579e1cfe280e5a5du}, /* k = -279 */
    {0x5a427cee4b20f4edu, 0x2c7e7d98200b7b7eu}, /* k = -278 */
    {0x483530bea280c3f1u, 0x09fecae019a2c932u}, /* k = -277 */
    {0x73884dfdd0ce064eu, 0x43314499c29e0eb6u}, /* k = -276 */
    {0x5c6d0b3173d8050bu, 0x4f5a9d47cee4d891u}, /* k = -275 */
    {0x49f0d5c129799da2u, 0x72aee4397250ad41u}, /* k = -274 */
    {0x764e22cea8c295d1u, 0x377e39f583b44868u}, /* k = -273 */
    {0x5ea4e8a553cede41u, 0x12cb61913629d387u}, /* k = -272 */
    {0x4bb72084430be500u, 0x756f8140f8217605u}, /* k = -271 */
    {0x792500d39e796e67u, 0x6f18cece59cf233cu}, /* k = -270 */
    {0x60ea670fb1fabeb9u, 0x3f470bd847d8e8fdu}, /* k = -269 */
    {0x4d885272f4c89894u, 0x329f3cad064720cau}, /* k = -268 */
    {0x7c0d50b7ee0dc0edu, 0x37652de1a3a50143u}, /* k = -267 */
    {0x633dda2cbe716724u, 0x2c50f1814fb73436u}, /* k = -266 */
    {0x4f64ae8a31f45283u, 0x3d0d8e010c92902bu}, /* k = -265 */
    {0x7f077da9e986ea6bu, 0x7b48e334e0ea8045u}, /* k = -264 */
    {0x659f97bb2138bb89u, 0x49071c2a4d88669du}, /* k = -263 */
    {0x514c796280fa2fa1u, 0x20d27ceea46d1ee4u}, /* k = -262 */
    {0x4109fab533fb594du, 0x670eca58838a7f1du}, /* k = -261 */
    {0x680ff788532bc216u, 0x0b4add5a6c10cb62u}, /* k = -260 */
    {0x533ff939dc2301abu, 0x22a24aaebcda3c4eu}, /* k = -259 */
    {0x4299942e49b59aefu, 0x354ea22563e1c9d8u}, /* k = -258 */
    {0x6a8f537d42bc2b18u, 0x554a9d089fcfa95au}, /* k = -257 */
    {0x553f75fdcefcef46u, 0x776ee406e63fbaaeu}, /* k = -256 */
    {0x4432c4cb0bfd8c38u, 0x5f8be99f1e996225u}, /* k = -255 */
    {0x6d1e07ab466279f4u, 0x327975cb64289d08u}, /* k = -254 */
    {0x574b3955d1e86190u, 0x28612b091ced4a6du}, /* k = -253 */
    {0x45d5c777db204e0du, 0x06b4226db0bdd524u}, /* k = -252 */
    {0x6fbc72595e9a167bu, 0x24536a491ac95506u}, /* k = -251 */
    {0x59638eade54811fcu, 0x1d0f883a7bd44405u}, /* k = -250 */
    {0x4782d88b1dd34196u, 0x4a72d361fca9d004u}, /* k = -249 */
    {0x726af411c952028au, 0x43eaebcffaa94cd3u}, /* k = -248 */
    {0x5b88c3416ddb353bu, 0x4fef230cc88770a9u}, /* k = -247 */
    {0x493a35cdf17c2a96u, 0x0cbf4f3d6d3926eeu}, /* k = -246 */
    {0x7529efafe8c6aa89u, 0x61321862485b717cu}, /* k = -245 */
    {0x5dbb262653d22207u, 0x675b46b506af8dfdu}, /* k = -244 */
    {0x4afc1e850fdb4e6cu, 0x52af6bc405593e64u}, /* k = -243 */
    {0x77f9ca6e7fc54a47u, 0x377f12d33bc1fd6du}, /* k = -242 */
    {0x5ffb085866376e9fu, 0x45ff42429634cabdu}, /* k = -241 */
    {0x4cc8d379eb5f8bb2u, 0x6b329b68782a3bcbu}, /* k = -240 */
    {0x7adaebf64565ac51u, 0x2b842bda59dd2c77u}, /* k = -239 */
    {0x6248bcc5045156a7u, 0x3c69bcaeae4a89f9u}, /* k = -238 */
    {0x4ea0970403744552u, 0x6387ca25583ba194u}, /* k = -237 */
    {0x7dcdbe6cd253a21eu, 0x05a6103bc05f68edu}, /* k = -236 */
    {0x64a498570ea94e7eu, 0x37b80cfc99e5ed8au}, /* k = -235 */
    {0x5083ad1272210b98u, 0x2c933d96e184be08u}, /* k = -234 */
    {0x40695741f4e73c79u, 0x7075cadf1ad09807u}, /* k = -233 */
    {0x670ef2032171fa5cu, 0x4d8944982ae759a4u}, /* k = -232 */
    {0x52725b35b45b2eb0u, 0x3e076a135585e150u}, /* k = -231 */
    {0x41f515c49048f226u, 0x64d2bb42aad1810du}, /* k = -230 */
    {0x698822d41a0e503eu, 0x07b7920444826815u}, /* k = -229 */
    {0x546ce8a9ae71d9cbu, 0x1fc60e69d0685344u}, /* k = -228 */
    {0x438a53baf1f4ae3cu, 0x196b3ebb0d20429du}, /* k = -227 */
    {0x6c1085f7e9877d2du, 0x0f11fdf815006a94u}, /* k = -226 */
    {0x56739e5fee05fdbdu, 0x58db319344005543u}, /* k = -225 */
    {0x45294b7ff19e6497u, 0x60af5adc3666aa9cu}, /* k = -224 */
    {0x6ea878ccb5ca3a8cu, 0x344bc4938a3dddc7u}, /* k = -223 */
    {0x5886c70a2b082ed6u, 0x5d096a0fa1cb17d2u}, /* k = -222 */
    {0x46d238d4ef39bf12u, 0x173abb3fb4a27975u}, /* k = -221 */
    {0x71505aee4b8f981du, 0x0b912b992103f588u}, /* k = -220 */
    {0x5aa6af25093face4u, 0x0940efadb4032ad3u}, /* k = -219 */
    {0x488558ea6dcc8a50u, 0x07672624900288a9u}, /* k = -218 */
    {0x74088e43e2e0dd4cu, 0x723ea36db337410eu}, /* k = -217 */
    {0x5cd3a5031be71770u, 0x5b654f8af5c5cda5u}, /* k = -216 */
    {0x4a42ea68e31f45f3u, 0x62b772d5916b0aebu}, /* k = -215 */
    {0x76d1770e38320986u, 0x0458b7bc1bde77ddu}, /* k = -214 */
    {0x5f0df8d82cf4d46bu, 0x1d13c630164b9318u}, /* k = -213 */
    {0x4c0b2d79bd90a9efu, 0x30dc9e8cdea2dc13u}, /* k = -212 */
    {0x79ab7bf5fc1aa97fu, 0x0160fdae31049351u}, /* k = -211 */
    {0x6155fcc4c9aeedffu, 0x1ab3fe24f403a90eu}, /* k = -210 */
    {0x4dde63d0a158be65u, 0x6229981d9002eda5u}, /* k = -209 */
    {0x7c97061a9bc130a2u, 0x69dc2695b337e2a1u}, /* k = -208 */
    {0x63ac04e2163426e8u, 0x54b01ede28f9821bu}, /* k = -207 */
    {0x4fbcd0b4de901f20u, 0x43c018b1ba6134e2u}, /* k = -206 */
    {0x7f9481216419cb67u, 0x1f99c11c5d68549du}, /* k = -205 */
    {0x6610674de9ae3c52u, 0x4c7b00e37ded107eu}, /* k = -204 */
    {0x51a6b90b21583042u, 0x09fc00b5fe574065u}, /* k = -203 */
    {0x41522da2811359ceu, 0x3b3000919845cd1du}, /* k = -202 */
    {0x68837c3734ebc2e3u, 0x784ccdb5c06fae95u}, /* k = -201 */
    {0x539c635f5d8968b6u, 0x2d0a3e2b00595877u}, /* k = -200 */
    {0x42e382b2b13aba2bu, 0x3da1cb5599e11393u}, /* k = -199 */
    {0x6b059deab52ac378u, 0x629c7888f634ec1eu}, /* k = -198 */
    {0x559e17eef755692du, 0x3549fa072b5d89b1u}, /* k = -197 */
    {0x447e798bf91120f1u, 0x1107fb38ef7e07c1u}, /* k = -196 */
    {0x6d9728dff4e834b5u, 0x01a65ec17f300c68u}, /* k = -195 */
    {0x57ac20b32a535d5du, 0x4e1eb23465c009edu}, /* k = -194 */
    {0x46234d5c21dc4ab1u, 0x24e55b5d1e333b24u}, /* k = -193 */
    {0x70387bc69c93aab5u, 0x216ef894fd1ec506u}, /* k = -192 */
    {0x59c6c96bb076222au, 0x4df2607730e56a6cu}, /* k = -191 */
    {0x47d23abc8d2b4e88u, 0x3e5b805f5a5121f0u}, /* k = -190 */
    {0x72e9f79415121740u, 0x63c59a322a1b697fu}, /* k = -189 */
    {0x5bee5fa9aa74df67u, 0x03047b5b54e2baccu}, /* k = -188 */
    {0x498b7fbaeec3e5ecu, 0x0269fc4910b5623du}, /* k = -187 */
    {0x75abff917e063cacu, 0x6a432d41b45569fbu}, /* k = -186 */
    {0x5e2332dacb38308au, 0x21cf5767c37787fcu}, /* k = -185 */
    {0x4b4f5be23c2cf3a1u, 0x67d912b9692c6ccau}, /* k = -184 */
    {0x787ef969f9e185cfu, 0x595b5128a8471476u}, /* k = -183 */
    {0x60659454c7e79e3fu, 0x6115da86ed05a9f8u}, /* k = -182 */
    {0x4d1e1043d31fb1ccu, 0x4dab1538bd9e2193u}, /* k = -181 */
    {0x7b634d3951cc4fadu, 0x62ab552795c9cf52u}, /* k = -180 */
    {0x62b5d7610e3d0c8bu, 0x0222aa86116e3f75u}, /* k = -179 */
    {0x4ef7df80d830d6d5u, 0x4e822204dabe992au}, /* k = -178 */
    {0x7e59659af38157bcu, 0x17369cd49130f510u}, /* k = -177 */
    {0x65145148c2cddfc9u, 0x5f5ee3dd40f3f740u}, /* k = -176 */
    {0x50dd0dd3cf0b196eu, 0x1918b64a9a5cc5cdu}, /* k = -175 */
    {0x40b0d7dca5a27abeu, 0x4746f83baeb09e3eu}, /* k = -174 */
    {0x678159610903f797u, 0x253e59f91780fd2fu}, /* k = -173 */
    {0x52cde11a6d9cc612u, 0x50feae60df9a6426u}, /* k = -172 */
    {0x423e4daebe1704dbu, 0x5a65584d7faeb685u}, /* k = -171 */
    {0x69fd4917968b3af9u, 0x10a226e265e4573bu}, /* k = -170 */
    {0x54caa0dfaba29594u, 0x0d4e8581eb1d1295u}, /* k = -169 */
    {0x43d54d7fbc821143u, 0x243ed134bc174211u}, /* k = -168 */
    {0x6c887bff94034ed2u, 0x06cae85460253682u}, /* k = -167 */
    {0x56d396661002a574u, 0x6bd586a9e6842b9bu}, /* k = -166 */
    {0x457611eb40021df7u, 0x09779eee52035616u}, /* k = -165 */
    {0x6f234fdeccd02ff1u, 0x5bf297e3b66bbcefu}, /* k = -164 */
    {0x58e90cb23d73598eu, 0x165bacb62b8963f3u}, /* k = -163 */
    {0x4720d6f4fdf5e13eu, 0x451623c4efa11cc2u}, /* k = -162 */
    {0x71ce24bb2fefcecau, 0x3b569fa17f682e03u}, /* k = -161 */
    {0x5b0b5095bff30bd5u, 0x15dee61acc535803u}, /* k = -160 */
    {0x48d5da11665c0977u, 0x2b18b8157042accfu}, /* k = -159 */
    {0x74895ce8a3c6758bu, 0x5e8df355806aae18u}, /* k = -158 */
    {0x5d3ab0ba1c9ec46fu, 0x653e5c4466bbbe7au}, /* k = -157 */
    {0x4a955a2e7d4bd059u, 0x3765169d1efc9861u}, /* k = -156 */
    {0x77555d172edfb3c2u, 0x256e8a94fe60f3cfu}, /* k = -155 */
    {0x5f777dac257fc301u, 0x6abed543feb3f63fu}, /* k = -154 */
    {0x4c5f97bceacc9c01u, 0x3bcbddcffef65e99u}, /* k = -153 */
    {0x7a328c6177adc668u, 0x5fac961997f0975bu}, /* k = -152 */
    {0x61c209e792f16b86u, 0x7fbd44e1465a12afu}, /* k = -151 */
    {0x4e34d4b9425abc6bu, 0x7fca9d810514dbbfu}, /* k = -150 */
    {0x7d21545b9d5dfa46u, 0x32ddc8ce6e87c5ffu}, /* k = -149 */
    {0x641aa9e2e44b2e9eu, 0x5be4a0a525396b32u}, /* k = -148 */
    {0x501554b5836f587eu, 0x7cb6e6ea842def5cu}, /* k = -147 */
    {0x4011109135f2ad32u, 0x30925255368b25e3u}, /* k = -146 */
    {0x6681b41b89844850u, 0x4db6ea21f0dea304u}, /* k = -145 */
    {0x52015ce2d469d373u, 0x57c5881b2718826au}, /* k = -144 */
    {0x419ab0b576bb0f8fu, 0x5fd139af527a01efu}, /* k = -143 */
    {0x68f781225791b27fu, 0x4c81f5e550c3364au}, /* k = -142 */
    {0x53f9341b79415b99u, 0x239b2b1dda35c508u}, /* k = -141 */
    {0x432dc3492dcde2e1u, 0x02e288e4ae916a6du}, /* k = -140 */
    {0x6b7c6ba849496b01u, 0x516a74a1174f10aeu}, /* k = -139 */
    {0x55fd22ed076def34u, 0x4121f6e745d8da25u}, /* k = -138 */
    {0x44ca82573924bf5du, 0x1a8192529e4714ebu}, /* k = -137 */
    {0x6e10d08b8ea1322eu, 0x5d9c1d50fd3e87ddu}, /* k = -136 */
    {0x580d73a2d880f4f2u, 0x17b01773fdcb9fe4u}, /* k = -135 */
    {0x4671294f139a5d8eu, 0x4626792997d61984u}, /* k = -134 */
    {0x70b50ee4ec2a2f4au, 0x3d0a5b75bfbcf59fu}, /* k = -133 */
    {0x5a2a7250bcee8c3bu, 0x4a6eaf916630c47fu}, /* k = -132 */
    {0x4821f50d63f209c9u, 0x21f2260deb5a36ccu}, /* k = -131 */
    {0x736988156cb6760eu, 0x69837016455d247au}, /* k = -130 */
    {0x5c546cddf091f80bu, 0x6e02c011d1175062u}, /* k = -129 */
    {0x49dd23e4c074c66fu, 0x719bccdb0dac404eu}, /* k = -128 */
    {0x762e9fd467213d7fu, 0x68f947c4e2ad33b0u}, /* k = -127 */
    {0x5e8bb3105280fdffu, 0x6d94396a4ef0f627u}, /* k = -126 */
    {0x4ba2f5a6a8673199u, 0x3e102deea58d91b9u}, /* k = -125 */
    {0x7904bc3dda3eb5c2u, 0x3019e3176f48e927u}, /* k = -124 */
    {0x60d09697e1cbc49bu, 0x4014b5ac590720ecu}, /* k = -123 */
    {0x4d73abacb4a303afu, 0x4cdd5e237a6c1a57u}, /* k = -122 */
    {0x7bec45e12104d2b2u, 0x47c8969f2a46908au}, /* k = -121 */
    {0x63236b1a80d0a88eu, 0x6ca0787f5505406fu}, /* k = -120 */
    {0x4f4f88e200a6ed3fu, 0x0a19f9ff773766bfu}, /* k = -119 */
    {0x7ee5a7d0010b1531u, 0x5cf65ccbf1f23dfeu}, /* k = -118 */
    {0x6584864000d5aa8eu, 0x172b7d6ff4c1cb32u}, /* k = -117 */
    {0x5136d1cccd77bba4u, 0x78ef978cc3ce3c28u}, /* k = -116 */
    {0x40f8a7d70ac62fb7u, 0x13f2dfa3cfd83020u}, /* k = -115 */
    {0x67f43fbe77a37f8bu, 0x398499061959e699u}, /* k = -114 */
    {0x5329cc985fb5ffa2u, 0x6136e0d1ade18548u}, /* k = -113 */
    {0x4287d6e04c91994fu, 0x00f8b3daf181376du}, /* k = -112 */
    {0x6a72f166e0e8f54bu, 0x1b27862b1c01f247u}, /* k = -111 */
    {0x5528c11f1a53f76fu, 0x2f52d1bc1667f506u}, /* k = -110 */
    {0x44209a7f48432c59u, 0x0c424163451ff738u}, /* k = -109 */
    {0x6d00f7320d3846f4u, 0x7a039bd208332526u}, /* k = -108 */
    {0x5733f8f4d76038c3u, 0x7b361641a028ea85u}, /* k = -107 */
    {0x45c32d90ac4cfa36u, 0x2f5e78348020bb9eu}, /* k = -106 */
    {0x6f9eaf4de07b29f0u, 0x4bca59ed99cdf8fcu}, /* k = -105 */
    {0x594bbf71806287f3u, 0x563b7b247b0b2d96u}, /* k = -104 */
    {0x476fcc5acd1b9ff6u, 0x11c92f50626f57acu}, /* k = -103 */
    {0x724c7a2ae1c5ccbdu, 0x02db7ee703e55912u}, /* k = -102 */
    {0x5b7061bbe7d17097u, 0x1be2cbec031de0dcu}, /* k = -101 */
    {0x4926b496530df3acu, 0x164f09899c17e716u}, /* k = -100 */
    {0x750aba8a1e7cb913u, 0x3d4b4275c68ca4f0u}, /* k = -99 */
    {0x5da22ed4e530940fu, 0x4aa29b916ba3b726u}, /* k = -98 */
    {0x4ae825771dc07672u, 0x6ee87c74561c9285u}, /* k = -97 */
    {0x77d9d58b62cd8a51u, 0x3173fa53bcfa8408u}, /* k = -96 */
    {0x5fe177a2b5713b74u, 0x278ffb7630c869a0u}, /* k = -95 */
    {0x4cb45fb55df42f90u, 0x1fa662c4f3d387b3u}, /* k = -94 */
    {0x7aba32bbc986b280u, 0x32a3d13b1fb8d91fu}, /* k = -93 */
    {0x622e8efca1388ecdu, 0x0ee9742f4c93e0e6u}, /* k = -92 */
    {0x4e8ba596e760723du, 0x58bac3590a0fe71eu}, /* k = -91 */
    {0x7dac3c24a5671d2fu, 0x412ad228101971c9u}, /* k = -90 */
    {0x6489c9b6eab8e426u, 0x00ef0e8673478e3bu}, /* k = -89 */
    {0x506e3af8bbc71cebu, 0x1a58d86b8f6c71c9u}, /* k = -88 */
    {0x40582f2d6305b0bcu, 0x1513e0560c56c16eu}, /* k = -87 */
    {0x66f37eaf04d5e793u, 0x3b530089ad579be2u}, /* k = -86 */
    {0x525c6558d0ab1fa9u, 0x15dc006e2446164fu}, /* k = -85 */
    {0x41e384470d55b2edu, 0x5e4999f1b69e783fu}, /* k = -84 */
    {0x696c06d81555eb15u, 0x7d428fe92430c065u}, /* k = -83 */
    {0x54566be0111188deu, 0x31020cba835a3384u}, /* k = -82 */
    {0x4378564cda746d7eu, 0x5a680a2ecf7b5c69u}, /* k = -81 */
    {0x6bf3bd47c3ed7bfdu, 0x770cdd17b25efa42u}, /* k = -80 */
    {0x565c976c9cbdfccbu, 0x1270b0dfc1e59502u}, /* k = -79 */
    {0x4516df8a16fe63d5u, 0x5b8d5a4c9b1e10ceu}, /* k = -78 */
    {0x6e8aff4357fd6c89u, 0x127bc3adc4fce7b0u}, /* k = -77 */
    {0x586f329c466456d4u, 0x0ec96957d0ca52f3u}, /* k = -76 */
    {0x46bf5bb038504576u, 0x3f07877973d50f29u}, /* k = -75 */
    {0x71322c4d26e6d58au, 0x31a5a58f1fbb4b75u}, /* k = -74 */
    {0x5a8e89d75252446eu, 0x5aeaead8e62f6f91u}, /* k = -73 */
    {0x487207df750e9d25u, 0x2f22557a51bf8c74u}, /* k = -72 */
    {0x73e9a63254e42ea2u, 0x1836ef2a1c65ad86u}, /* k = -71 */
    {0x5cbaeb5b771cf21bu, 0x2cf8bf54e3848ad2u}, /* k = -70 */
    {0x4a2f22af927d8e7cu, 0x23fa32aa4f9d3bdbu}, /* k = -69 */
    {0x76b1d118ea627d93u, 0x5329eaaa18fb92f8u}, /* k = -68 */
    {0x5ef4a74721e86476u, 0x0f54bbbb472fa8c6u}, /* k = -67 */
    {0x4bf6ec38e7ed1d2bu, 0x25dd62fc38f2ed6cu}, /* k = -66 */
    {0x798b138e3fe1c845u, 0x22fbd1938e517bdfu}, /* k = -65 */
    {0x613c0fa4ffe7d36au, 0x4f2fdadc71dac97fu}, /* k = -64 */
    {0x4dc9a61d998642bbu, 0x58f3157d27e23accu}, /* k = -63 */
    {0x7c75d695c2706ac5u, 0x74b82261d969f7adu}, /* k = -62 */
    {0x63917877cec0556bu, 0x10934eb4adee5fbeu}, /* k = -61 */
    {0x4fa793930bcd1122u, 0x4075d8908b251965u}, /* k = -60 */
    {0x7f7285b812e1b504u, 0x00bc8db411d4f56eu}, /* k = -59 */
    {0x65f537c675815d9cu, 0x66fd3e29a7dd9125u}, /* k = -58 */
    {0x5190f96b91344ae3u, 0x6bfdcb54864ada84u}, /* k = -57 */
    {0x4140c78940f6a24fu, 0x6ffe3c439ea2486au}, /* k = -56 */
    {0x6867a5a867f103b2u, 0x7ffd2d38fdd073dcu}, /* k = -55 */
    {0x53861e2053273628u, 0x6664242d97d9f64au}, /* k = -54 */
    {0x42d1b1b375b8f820u, 0x51e9b68adfe191d5u}, /* k = -53 */
    {0x6ae91c5255f4c034u, 0x1ca924116635b621u}, /* k = -52 */
    {0x558749db77f70029u, 0x63ba83411e915e81u}, /* k = -51 */
    {0x446c3b15f9926687u, 0x6962029a7edab201u}, /* k = -50 */
    {0x6d79f82328ea3da6u, 0x0f03375d97c45001u}, /* k = -49 */
    {0x5794c6828721caebu, 0x259c2c4adfd04001u}, /* k = -48 */
    {0x46109eced2816f22u, 0x5149bd08b30d0001u}, /* k = -47 */
    {0x701a97b150cf1837u, 0x3542c80deb480001u}, /* k = -46 */
    {0x59aedfc10d7279c5u, 0x7768a00b22a00001u}, /* k = -45 */
    {0x47bf19673df52e37u, 0x79208008e8800001u}, /* k = -44 */
    {0x72cb5bd86321e38cu, 0x5b67334174000001u}, /* k = -43 */
    {0x5bd5e313828182d6u, 0x7c528f6790000001u}, /* k = -42 */
    {0x4977e8dc68679bdfu, 0x16a872b940000001u}, /* k = -41 */
    {0x758ca7c70d7292feu, 0x5773eac200000001u}, /* k = -40 */
    {0x5e0a1fd271287598u, 0x45f6556800000001u}, /* k = -39 */
    {0x4b3b4ca85a86c47au, 0x04c5112000000001u}, /* k = -38 */
    {0x785ee10d5da46d90u, 0x07a1b50000000001u}, /* k = -37 */
    {0x604be73de4838ad9u, 0x52e7c40000000001u}, /* k = -36 */
    {0x4d0985cb1d3608aeu, 0x0f1fd00000000001u}, /* k = -35 */
    {0x7b426fab61f00de3u, 0x31cc800000000001u}, /* k = -34 */
    {0x629b8c891b267182u, 0x5b0a000000000001u}, /* k = -33 */
    {0x4ee2d6d415b85aceu, 0x7c08000000000001u}, /* k = -32 */
    {0x7e37be2022c0914bu, 0x1340000000000001u}, /* k = -31 */
    {0x64f964e68233a76fu, 0x2900000000000001u}, /* k = -30 */
    {0x50c783eb9b5c85f2u, 0x5400000000000001u}, /* k = -29 */
    {0x409f9cbc7c4a04c2u, 0x1000000000000001u}, /* k = -28 */
    {0x6765c793fa10079du, 0x0000000000000001u}, /* k = -27 */
    {0x52b7d2dcc80cd2e4u, 0x0000000000000001u}, /* k = -26 */
    {0x422ca8b0a00a4250u, 0x0000000000000001u}, /* k = -25 */
    {0x69e10de76676d080u, 0x0000000000000001u}, /* k = -24 */
    {0x54b40b1f852bda00u, 0x0000000000000001u}, /* k = -23 */
    {0x43c33c1937564800u, 0x0000000000000001u}, /* k = -22 */
    {0x6c6b935b8bbd4000u, 0x0000000000000001u}, /* k = -21 */
    {0x56bc75e2d6310000u, 0x0000000000000001u}, /* k = -20 */
    {0x4563918244f40000u, 0x0000000000000001u}, /* k = -19 */
    {0x6f05b59d3b200000u, 0x0000000000000001u}, /* k = -18 */
    {0x58d15e1762800000u, 0x0000000000000001u}, /* k = -17 */
    {0x470de4df82000000u, 0x0000000000000001u}, /* k = -16 */
    {0x71afd498d0000000u, 0x0000000000000001u}, /* k = -15 */
    {0x5af3107a40000000u, 0x0000000000000001u}, /* k = -14 */
    {0x48c2739500000000u, 0x0000000000000001u}, /* k = -13 */
    {0x746a528800000000u, 0x0000000000000001u}, /* k = -12 */
    {0x5d21dba000000000u, 0x0000000000000001u}, /* k = -11 */
    {0x4a817c8000000000u, 0x0000000000000001u}, /* k = -10 */
    {0x7735940000000000u, 0x0000000000000001u}, /* k = -9 */
    {0x5f5e100000000000u, 0x0000000000000001u}, /* k = -8 */
    {0x4c4b400000000000u, 0x0000000000000001u}, /* k = -7 */
    {0x7a12000000000000u, 0x0000000000000001u}, /* k = -6 */
    {0x61a8000000000000u, 0x0000000000000001u}, /* k = -5 */
    {0x4e20000000000000u, 0x0000000000000001u}, /* k = -4 */
    {0x7d00000000000000u, 0x0000000000000001u}, /* k = -3 */
    {0x6400000000000000u, 0x0000000000000001u}, /* k = -2 */
    {0x5000000000000000u, 0x0000000000000001u}, /* k = -1 */
    {0x4000000000000000u, 0x0000000000000001u}, /* k = 0 */
    {0x6666666666666666u, 0x3333333333333334u}, /* k = 1 */
    {0x51eb851eb851eb85u, 0x0f5c28f5c28f5c29u}, /* k = 2 */
    {0x4189374bc6a7ef9du, 0x5916872b020c49bbu}, /* k = 3 */
    {0x68db8bac710cb295u, 0x74f0d844d013a92bu}, /* k = 4 */
    {0x53e2d6238da3c211u, 0x43f3e0370cdc8755u}, /* k = 5 */
    {0x431bde82d7b634dau, 0x698fe69270b06c44u}, /* k = 6 */
    {0x6b5fca6af2bd215eu, 0x0f4ca41d811a46d4u}, /* k = 7 */
    {0x55e63b88c230e77eu, 0x3f70834acdae9f10u}, /* k = 8 */
    {0x44b82fa09b5a52cbu, 0x4c5a02a23e254c0du}, /* k = 9 */
    {0x6df37f675ef6eadfu, 0x2d5cd10396a21347u}, /* k = 10 */
    {0x57f5ff85e592557fu, 0x3de3da69454e75d3u}, /* k = 11 */
    {0x465e6604b7a84465u, 0x7e4fe1edd10b9175u}, /* k = 12 */
    {0x709709a125da0709u, 0x4a19697c81ac1befu}, /* k = 13 */
    {0x5a126e1a84ae6c07u, 0x54e1213067bce326u}, /* k = 14 */
    {0x480ebe7b9d58566cu, 0x43e74dc052fd8285u}, /* k = 15 */
    {0x734aca5f6226f0adu, 0x530baf9a1e626a6du}, /* k = 16 */
    {0x5c3bd5191b525a24u, 0x426fbfae7eb521f1u}, /* k = 17 */
    {0x49c97747490eae83u, 0x4ebfcc8b9890e7f4u}, /* k = 18 */
    {0x760f253edb4ab0d2u, 0x4acc7a78f41b0cbau}, /* k = 19 */
    {0x5e72843249088d75u, 0x223d2ec729af3d62u}, /* k = 20 */
    {0x4b8ed0283a6d3df7u, 0x34fdbf05baf29781u}, /* k = 21 */
    {0x78e480405d7b9658u, 0x54c931a2c4b758cfu}, /* k = 22 */
    {0x60b6cd004ac94513u, 0x5d6dc14f03c5e0a5u}, /* k = 23 */
    {0x4d5f0a66a23a9da9u, 0x31249aa59c9e4d51u}, /* k = 24 */
    {0x7bcb43d769f762a8u, 0x4ea0f76f60fd4882u}, /* k = 25 */
    {0x63090312bb2c4eedu, 0x254d92bf80caa068u}, /* k = 26 */
    {0x4f3a68dbc8f03f24u, 0x1dd7a89933d54d20u}, /* k = 27 */
    {0x7ec3daf941806506u, 0x62f2a75b86221500u}, /* k = 28 */
    {0x65697bfa9acd1d9fu, 0x025bb91604e810cdu}, /* k = 29 */
    {0x51212ffbaf0a7e18u, 0x684960de6a5340a4u}, /* k = 30 */
    {0x40e7599625a1fe7au, 0x203ab3e521dc33b6u}, /* k = 31 */
    {0x67d88f56a29cca5du, 0x19f7863b696052bdu}, /* k = 32 */
    {0x5313a5dee87d6eb0u, 0x7b2c6b62bab37564u}, /* k = 33 */
    {0x42761e4bed31255au, 0x2f56bc4efbc2c450u}, /* k = 34 */
    {0x6a5696dfe1e83bc3u, 0x655793b192d13a1au}, /* k = 35 */
    {0x5512124cb4b9c969u, 0x377942f475742e7bu}, /* k = 36 */
    {0x440e750a2a2e3abau, 0x5f9435905df68b96u}, /* k = 37 */
    {0x6ce3ee76a9e3912au, 0x65b9ef4d63241289u}, /* k = 38 */
    {0x571cbec554b60dbbu, 0x6afb25d782834207u}, /* k = 39 */
    {0x45b0989ddd5e7163u, 0x08c8eb12cecf6806u}, /* k = 40 */
    {0x6f80f42fc8971bd1u, 0x5adb11b7b14bd9a3u}, /* k = 41 */
    {0x5933f68ca078e30eu, 0x157c0e2c8dd647b5u}, /* k = 42 */
    {0x475cc53d4d2d8271u, 0x5dfcd823a4ab6c91u}, /* k = 43 */
    {0x722e086215159d82u, 0x632e269f6ddf141bu}, /* k = 44 */
    {0x5b5806b4ddaae468u, 0x4f581ee5f17f4349u}, /* k = 45 */
    {0x49133890b1558386u, 0x72ace584c1329c3bu}, /* k = 46 */
    {0x74eb8db44eef38d7u, 0x6aae3c079b842d2au}, /* k = 47 */
    {0x5d893e29d8bf60acu, 0x5558300616035755u}, /* k = 48 */
    {0x4ad431bb13cc4d56u, 0x7779c004de6912abu}, /* k = 49 */
    {0x77b9e92b52e07bbeu, 0x258f99a163db5111u}, /* k = 50 */
    {0x5fc7edbc424d2fcbu, 0x37a614811caf740du}, /* k = 51 */
    {0x4c9ff163683dbfd5u, 0x7951aa00e3bf900bu}, /* k = 52 */
    {0x7a998238a6c932efu, 0x754f7667d2cc19abu}, /* k = 53 */
    {0x6214682d523a8f26u, 0x2aa5f8530f09ae22u}, /* k = 54 */
    {0x4e76b9bddb620c1eu, 0x55519375a5a1581bu}, /* k = 55 */
    {0x7d8ac2c95f034697u, 0x3bb5b8bc3c3559c5u}, /* k = 56 */
    {0x646f023ab2690545u, 0x7c9160969691149eu}, /* k = 57 */
    {0x5058ce955b87376bu, 0x16dab3ababa743b2u}, /* k = 58 */
    {0x40470baaaf9f5f88u, 0x78aef622efb902f5u}, /* k = 59 */
    {0x66d812aab29898dbu, 0x0de4bd04b2c19e54u}, /* k = 60 */
    {0x524675555bad4715u, 0x57ea30d08f014b76u}, /* k = 61 */
    {0x41d1f7777c8a9f44u, 0x4654f3da0c01092cu}, /* k = 62 */
    {0x694ff258c7443207u, 0x23bb1fc346680eacu}, /* k = 63 */
    {0x543ff513d29cf4d2u, 0x4fc8e635d1ecd88au}, /* k = 64 */
    {0x43665da9754a5d75u, 0x263a51c4a7f0ad3bu}, /* k = 65 */
    {0x6bd6fc425543c8bbu, 0x56c3b607731aaec4u}, /* k = 66 */
    {0x5645969b77696d62u, 0x789c919f8f488bd0u}, /* k = 67 */
    {0x4504787c5f878ab5u, 0x46e3a7b2d906d640u}, /* k = 68 */
    {0x6e6d8d93cc0c1122u, 0x3e390c515b3e239au}, /* k = 69 */
    {0x5857a4763cd6741bu, 0x4b60d6a77c31b615u}, /* k = 70 */
    {0x46ac8391ca4529afu, 0x55e7121f968e2b44u}, /* k = 71 */
    {0x711405b6106ea919u, 0x0971b698f0e3786du}, /* k = 72 */
    {0x5a766af80d255414u, 0x078e2bad8d82c6bdu}, /* k = 73 */
    {0x485ebbf9a41ddcdcu, 0x6c71bc8ad79bd231u}, /* k = 74 */
    {0x73cac65c39c96161u, 0x2d82c7448c2c8382u}, /* k = 75 */
    {0x5ca23849c7d44de7u, 0x3e023903a356cf9bu}, /* k = 76 */
    {0x4a1b603b06437185u, 0x7e682d9c82abd949u}, /* k = 77 */
    {0x76923391a39f1c09u, 0x4a4048fa6aac8edbu}, /* k = 78 */
    {0x5edb5c7482e5b007u, 0x55003a61eef07249u}, /* k = 79 */
    {0x4be2b05d35848cd2u, 0x773361e7f259f507u}, /* k = 80 */
    {0x796ab3c855a0e151u, 0x3eb89ca6508fee71u}, /* k = 81 */
    {0x6122296d114d810du, 0x7efa16eb73a6585bu}, /* k = 82 */
    {0x4db4edf0daa4673eu, 0x3261abef8fb846afu}, /* k = 83 */
    {0x7c54afe7c43a3ecau, 0x1d691318e5f3a44bu}, /* k = 84 */
    {0x6376f31fd02e98a1u, 0x64540f471e5c836fu}, /* k = 85 */
    {0x4f925c1973587a1bu, 0x0376729f4b7d35f3u}, /* k = 86 */
    {0x7f50935bebc0c35eu, 0x38bd84321261efebu}, /* k = 87 */
    {0x65da0f7cbc9a35e5u, 0x13cad0280eb4bfefu}, /* k = 88 */
    {0x517b3f96fd482b1du, 0x5ca240200bc3ccbfu}, /* k = 89 */
    {0x412f66126439bc17u, 0x63b50019a3030a33u}, /* k = 90 */
    {0x684bd683d38f9359u, 0x1f88002904d1a9eau}, /* k = 91 */
    {0x536fdecfdc72dc47u, 0x32d3335403daee55u}, /* k = 92 */
    {0x42bfe57316c249d2u, 0x5bdc291003158b77u}, /* k = 93 */
    {0x6acca251be03a951u, 0x12f9db4cd1bc1258u}, /* k = 94 */
    {0x557081dafe695440u, 0x7594af70a7c9a847u}, /* k = 95 */
    {0x445a017bfebaa9cdu, 0x4476f2c0863aed06u}, /* k = 96 */
    {0x6d5ccf2ccac442e2u, 0x3a57eacda3917b3cu}, /* k = 97 */
    {0x577d728a3bd03581u, 0x7b7988a482dac8fdu}, /* k = 98 */
    {0x45fdf53b630cf79bu, 0x15fad3b6cf156d97u}, /* k = 99 */
    {0x6ffcbb923814bf5eu, 0x565e1f8ae4ef15beu}, /* k = 100 */
    {0x5996fc74f9aa32b2u, 0x11e4e608b725aaffu}, /* k = 101 */
    {0x47abfd2a6154f55bu, 0x27ea51a0928488ccu}, /* k = 102 */
    {0x72acc843ceee555eu, 0x7310829a84074146u}, /* k = 103 */
    {0x5bbd6d030bf1dde5u, 0x42739baed005cdd2u}, /* k = 104 */
    {0x49645735a327e4b7u, 0x4ec2e2f24004a4a8u}, /* k = 105 */
    {0x756d5855d1d96df2u, 0x4ad16b1d333aa10cu}, /* k = 106 */
    {0x5df11377db1457f5u, 0x2241227dc2954da3u}, /* k = 107 */
    {0x4b2742c648dd132au, 0x4e9a81fe35443e1cu}, /* k = 108 */
    {0x783ed13d4161b844u, 0x175d9cc9eed39694u}, /* k = 109 */
    {0x603240fdcde7c69cu, 0x7917b0a18bdc7876u}, /* k = 110 */
    {0x4cf500cb0b1fd217u, 0x1412f3b46fe39392u}, /* k = 111 */
    {0x7b219ade7832e9beu, 0x535185ed7fd285b6u}, /* k = 112 */
    {0x628148b1f9c25498u, 0x42a79e57997537c5u}, /* k = 113 */
    {0x4ecdd3c1949b76e0u, 0x3552e512e12a9304u}, /* k = 114 */
    {0x7e161f9c20f8be33u, 0x6eeb081e3510eb39u}, /* k = 115 */
    {0x64de7fb01a609829u, 0x3f226ce4f740bc2eu}, /* k = 116 */
    {0x50b1ffc0151a1354u, 0x3281f0b72c33c9beu}, /* k = 117 */
    {0x408e66334414dc43u, 0x42018d5f568fd498u}, /* k = 118 */
    {0x674a3d1ed354939fu, 0x1ccf48988a7fba8du}, /* k = 119 */
    {0x52a1ca7f0f76dc7fu, 0x30a5d3ad3b99620bu}, /* k = 120 */
    {0x421b0865a5f8b065u, 0x73b7dc8a96144e6fu}, /* k = 121 */
    {0x69c4da3c3cc11a3cu, 0x52bfc7442353b0b1u}, /* k = 122 */
    {0x549d7b6363cdae96u, 0x756639034f7626f4u}, /* k = 123 */
    {0x43b12f82b63e2545u, 0x4451c735d92b525du}, /* k = 124 */
    {0x6c4eb26abd303ba2u, 0x3a1c71efc1deea2eu}, /* k = 125 */
    {0x56a55b889759c94eu, 0x61b05b2634b254f2u}, /* k = 126 */
    {0x45511606df7b0772u, 0x1af37c1e908eaa5bu}, /* k = 127 */
    {0x6ee8233e325e7250u, 0x2b1f2cfdb41776f8u}, /* k = 128 */
    {0x58b9b5cb5b7ec1d9u, 0x6f4c23fe29ac5f2du}, /* k = 129 */
    {0x46faf7d5e2cbce47u, 0x72a34ffe87bd18f1u}, /* k = 130 */
    {0x71918c896adfb073u, 0x04387ffda5fb5b1bu}, /* k = 131 */
    {0x5adad6d4557fc05cu, 0x0360666484c915afu}, /* k = 132 */
    {0x48af1243779966b0u, 0x02b3851d3707448cu}, /* k = 133 */
    {0x744b506bf28f0ab3u, 0x1dec082ebe720746u}, /* k = 134 */
    {0x5d090d2328726ef5u, 0x64bcd358985b3905u}, /* k = 135 */
    {0x4a6da41c205b8bf7u, 0x6a30a913ad15c738u}, /* k = 136 */
    {0x7715d36033c5acbfu, 0x5d1aa81f7b560b8cu}, /* k = 137 */
    {0x5f44a919c3048a32u, 0x7daeece5fc44d609u}, /* k = 138 */
    {0x4c36edae359d3b5bu, 0x7e258a51969d7808u}, /* k = 139 */
    {0x79f17c49ef61f893u, 0x16a276e8f0fbf33fu}, /* k = 140 */
    {0x618dfd07f2b4c6dcu, 0x121b9253f3fcc299u}, /* k = 141 */
    {0x4e0b30d328909f16u, 0x41afa84329970214u}, /* k = 142 */
    {0x7cdeb4850db431bdu, 0x4f7f739ea8f19cedu}, /* k = 143 */
    {0x63e55d373e29c164u, 0x3f99294bba5ae3f1u}, /* k = 144 */
    {0x4feab0f8fe87cde9u, 0x7fadbaa2fb7be98du}, /* k = 145 */
    {0x7fdde7f4ca72e30fu, 0x7f7c5dd1925fdc15u}, /* k = 146 */
    {0x664b1ff7085be8d9u, 0x4c637e4141e649abu}, /* k = 147 */
    {0x51d5b32c06afed7au, 0x704f983434b83aefu}, /* k = 148 */
    {0x4177c2899ef32462u, 0x26a6135cf6f9c8bfu}, /* k = 149 */
    {0x68bf9da8fe51d3d0u, 0x3dd685618b294132u}, /* k = 150 */
    {0x53cc7e20cb74a973u, 0x4b12044e08edcdc2u}, /* k = 151 */
    {0x4309fe80a2c3bac2u, 0x6f419d0b3a57d7ceu}, /* k = 152 */
    {0x6b4330cdd1392ad1u, 0x320294dec3bfbfb0u}, /* k = 153 */
    {0x55cf5a3e40fa88a7u, 0x419baa4bcfcc995au}, /* k = 154 */
    {0x44a5e1cb672ed3b9u, 0x1ae2eea30ca3ade1u}, /* k = 155 */
    {0x6dd636123eb152c1u, 0x77d17dd1add2afcfu}, /* k = 156 */
    {0x57de91a832277567u, 0x797464a7be42263fu}, /* k = 157 */
    {0x464ba7b9c1b92ab9u, 0x4790508631ce84ffu}, /* k = 158 */
    {0x70790c5c6928445cu, 0x0c1a1a704fb0d4ccu}, /* k = 159 */
    {0x59fa7049edb9d049u, 0x567b4859d95a43d6u}, /* k = 160 */
    {0x47fb8d07f161736eu, 0x11fc39e17aae9cabu}, /* k = 161 */
    {0x732c14d98235857du, 0x032d2968c44a9445u}, /* k = 162 */
    {0x5c2343e134f79dfdu, 0x4f575453d03ba9d1u}, /* k = 163 */
    {0x49b5cfe75d92e4cau, 0x72ac4376402fbb0eu}, /* k = 164 */
    {0x75efb30bc8eb07abu, 0x0446d256cd192b49u}, /* k = 165 */
    {0x5e595c096d88d2efu, 0x1d0575123dadbc3au}, /* k = 166 */
    {0x4b7ab0078ad3dbf2u, 0x4a6ac40e97be302fu}, /* k = 167 */
    {0x78c44cd8de1fc650u, 0x771139b0f2c9e6b1u}, /* k = 168 */
    {0x609d0a4718196b73u, 0x78da948d8f07ebc1u}, /* k = 169 */
    {0x4d4a6e9f467abc5cu, 0x60aedd3e0c065634u}, /* k = 170 */
    {0x7baa4a9870c46094u, 0x344afb9679a3bd20u}, /* k = 171 */
    {0x62eea2138d69e6ddu, 0x103bfc78614fca80u}, /* k = 172 */
    {0x4f254e760abb1f17u, 0x26966393810ca200u}, /* k = 173 */
    {0x7ea21723445e9825u, 0x2423d2859b476999u}, /* k = 174 */
    {0x654e78e9037ee01du, 0x69b642047c392148u}, /* k = 175 */
    {0x510b93ed9c658017u, 0x6e2b680396941aa0u}, /* k = 176 */
    {0x40d60ff149eaccdfu, 0x71bc53361210154du}, /* k = 177 */
    {0x67bce64edcaae166u, 0x1c6085235019bbaeu}, /* k = 178 */
    {0x52fd850be3bbe784u, 0x7d1a041c40149625u}, /* k = 179 */
    {0x42646a6fe9631f9du, 0x4a7b367d0010781du}, /* k = 180 */
    {0x6a3a43e642383295u, 0x5d91f0c8001a59c8u}, /* k = 181 */
    {0x54fb698501c68edeu, 0x17a7f3d3334847d4u}, /* k = 182 */
    {0x43fc546a67d20be4u, 0x79532975c2a03976u}, /* k = 183 */
    {0x6cc6ed770c83463bu, 0x0eeb75893766c256u}, /* k = 184 */
    {0x57058ac5a39c382fu, 0x25892ad42c523512u}, /* k = 185 */
    {0x459e089e1c7cf9bfu, 0x37a0ef102374f742u}, /* k = 186 */
    {0x6f6340fcfa618f98u, 0x59017e8038bb2536u}, /* k = 187 */
    {0x591c33fd951ad946u, 0x7a67986693c8ea91u}, /* k = 188 */
    {0x4749c33144157a9fu, 0x151fad1edca0bba8u}, /* k = 189 */
    {0x720f9eb539bbf765u, 0x0832ae97c76792a5u}, /* k = 190 */
    {0x5b3fb22a94965f84u, 0x068ef21305ec7551u}, /* k = 191 */
    {0x48ffc1bbaa11e603u, 0x1ed8c1a8d189f774u}, /* k = 192 */
    {0x74cc692c434fd66bu, 0x4af4690e1c0ff253u}, /* k = 193 */
    {0x5d705423690cab89u, 0x225d20d816732843u}, /* k = 194 */
    {0x4ac0434f873d5607u, 0x35174d79ab8f5369u}, /* k = 195 */
    {0x779a054c0b955672u, 0x21bee25c45b21f0eu}, /* k = 196 */
    {0x5fae6aa33c77785bu, 0x3498b5169e2818d8u}, /* k = 197 */
    {0x4c8b888296c5f9e2u, 0x5d46f7454b534713u}, /* k = 198 */
    {0x7a78da6a8ad65c9du, 0x7ba4bed545520b52u}, /* k = 199 */
    {0x61fa48553bdeb07eu, 0x2fb6ff110441a2a8u}, /* k = 200 */
    {0x4e61d37763188d31u, 0x72f8cc0d9d014eedu}, /* k = 201 */
    {0x7d6952589e8daeb6u, 0x1e5ae015c80217e1u}, /* k = 202 */
    {0x645441e07ed7bef8u, 0x1848b344a001acb4u}, /* k = 203 */
    {0x504367e6cbdfcbf9u, 0x603a2903b3348a2au}, /* k = 204 */
    {0x4035ecb8a3196ffbu, 0x002e873628f6d4eeu}, /* k = 205 */
    {0x66bcadf43828b32bu, 0x19e40b89db2487e3u}, /* k = 206 */
    {0x52308b29c686f5bcu, 0x14b66fa17c1d3983u}, /* k = 207 */
    {0x41c06f549ed25e30u, 0x1091f2e7967dc79cu}, /* k = 208 */
    {0x6933e554315096b3u, 0x341cb7d8f0c93f5fu}, /* k = 209 */
    {0x542984435aa6def5u, 0x767d5fe0c0a0ff80u}, /* k = 210 */
    {0x435469cf7bb8b25eu, 0x2b977fe70080cc66u}, /* k = 211 */
    {0x6bba42e592c11d63u, 0x5f58cca4cd9ae0a3u}, /* k = 212 */
    {0x562e9beadbcdb11cu, 0x4c470a1d7148b3b6u}, /* k = 213 */
    {0x44f216557ca48db0u, 0x3d05a1b1276d5c92u}, /* k = 214 */
    {0x6e5023bbfaa0e2b3u, 0x7b3c35e83f1560e9u}, /* k = 215 */
    {0x58401c96621a4ef6u, 0x2f635e5365aab3edu}, /* k = 216 */
    {0x4699b0784e7b725eu, 0x591c4b75eaeef658u}, /* k = 217 */
    {0x70f5e726e3f8b6fdu, 0x74fa125644b18a26u}, /* k = 218 */
    {0x5a5e5285832d5f31u, 0x43fb41de9d5ad4ebu}, /* k = 219 */
    {0x484b75379c244c27u, 0x4ffc34b2177bdd89u}, /* k = 220 */
    {0x73abeebf603a1372u, 0x4cc6bab68bf96274u}, /* k = 221 */
    {0x5c898bcc4cfb42c2u, 0x0a38955ed6611b90u}, /* k = 222 */
    {0x4a07a309d72f689bu, 0x21c6dde5784dafa7u}, /* k = 223 */
    {0x76729e762518a75eu, 0x693e2fd58d49190bu}, /* k = 224 */
    {0x5ec2185e8413b918u, 0x5431bfde0aa0e0d5u}, /* k = 225 */
    {0x4bce79e536762dadu, 0x29c1664b3bb3e711u}, /* k = 226 */
    {0x794a5ca1f0bd15e2u, 0x0f9bd6dec5eca4e8u}, /* k = 227 */
    {0x61084a1b26fdab1bu, 0x2616457f04bd50bau}, /* k = 228 */
    {0x4da03b48ebfe227cu, 0x1e783798d09773c8u}, /* k = 229 */
    {0x7c33920e46636a60u, 0x30c058f480f252d9u}, /* k = 230 */
    {0x635c74d8384f884du, 0x0d66ad9067284247u}, /* k = 231 */
    {0x4f7d2a469372d370u, 0x711ef14052869b6cu}, /* k = 232 */
    {0x7f2eaa0a85848581u, 0x34fe4ecd50d75f14u}, /* k = 233 */
    {0x65beee6ed136d134u, 0x2a650bd773df7f43u}, /* k = 234 */
    {0x51658b8bda9240f6u, 0x551da312c319329cu}, /* k = 235 */
    {0x411e093caedb672bu, 0x5db14f4235adc217u}, /* k = 236 */
    {0x68300ec77e2bd845u, 0x7c4ee536bc49368au}, /* k = 237 */
    {0x5359a56c64efe037u, 0x7d0bea92303a9208u}, /* k = 238 */
    {0x42ae1df050bfe693u, 0x173cbba8269541a0u}, /* k = 239 */
    {0x6ab02fe6e79970ebu, 0x3ec792a6a422029au}, /* k = 240 */
    {0x5559bfebec7ac0bcu, 0x3239421ee9b4cee1u}, /* k = 241 */
    {0x4447ccbcbd2f0096u, 0x5b6101b25490a581u}, /* k = 242 */
    {0x6d3fadfac84b3424u, 0x2bce691d541aa268u}, /* k = 243 */
    {0x576624c8a03c29b6u, 0x563eba7ddce21b87u}, /* k = 244 */
    {0x45eb50a08030215eu, 0x78322ecb171b4939u}, /* k = 245 */
    {0x6fdee76733803564u, 0x59e9e47824f87527u}, /* k = 246 */
    {0x597f1f85c2ccf783u, 0x6187e9f9b72d2a86u}, /* k = 247 */
    {0x4798e6049bd72c69u, 0x346cbb2e2c242205u}, /* k = 248 */
    {0x728e3cd42c8b7a42u, 0x20adf849e039d007u}, /* k = 249 */
    {0x5ba4fd768a092e9bu, 0x33be603b19c7d99fu}, /* k = 250 */
    {0x4950cac53b3a8bafu, 0x42feb3627b0647b3u}, /* k = 251 */
    {0x754e113b91f745e5u, 0x5197856a5e7072b8u}, /* k = 252 */
    {0x5dd80dc941929e51u, 0x27ac6abb7ec05bc6u}, /* k = 253 */
    {0x4b133e3a9adbb1dau, 0x52f05562cbcd1638u}, /* k = 254 */
    {0x781ec9f75e2c4fc4u, 0x1e4d556adfae89f3u}, /* k = 255 */
    {0x6018a192b1bd0c9cu, 0x7ea444557fbed4c3u}, /* k = 256 */
    {0x4ce0814227ca707du, 0x4bb69d1132ff109cu}, /* k = 257 */
    {0x7b00ced03faa4d95u, 0x5f8a94e851981a93u}, /* k = 258 */
    {0x62670bd9cc883e11u, 0x32d543ed0e134875u}, /* k = 259 */
    {0x4eb8d647d6d364dau, 0x5bddcff0d80f6d2bu}, /* k = 260 */
    {0x7df48a0c8aebd491u, 0x12fc7fe7c018aeabu}, /* k = 261 */
    {0x64c3a1a3a25643a7u, 0x28c9ffec99ad5889u}, /* k = 262 */
    {0x509c814fb511cfb9u, 0x0707fff07af113a1u}, /* k = 263 */
    {0x407d343fc40e3fc7u, 0x1f39998d2f2742e7u}, /* k = 264 */
    {0x672eb9ffa016cc71u, 0x7ec28f484b7204a4u}, /* k = 265 */
    {0x528bc7ffb345705bu, 0x189ba5d36f8e6a1du}, /* k = 266 */
    {0x42096ccc8f6ac048u, 0x7a161e42bfa521b1u}, /* k = 267 */
    {0x69a8ae1418aacd41u, 0x435696d132a1cf81u}, /* k = 268 */
    {0x5486f1a9ad557101u, 0x1c454574288172ceu}, /* k = 269 */
    {0x439f27baf1112734u, 0x169dd129ba0128a5u}, /* k = 270 */
    {0x6c31d92b1b4ea520u, 0x242fb50f9001daa1u}, /* k = 271 */
    {0x568e4755af721db3u, 0x368c90d940017bb4u}, /* k = 272 */
    {0x453e9f77bf8e7e29u, 0x120a0d7a999ac95du}, /* k = 273 */
    {0x6eca98bf98e3fd0eu, 0x50101590f5c47561u}, /* k = 274 */
    {0x58a213cc7a4ffda5u, 0x26734473f7d05de8u}, /* k = 275 */
    {0x46e80fd6c83ffe1du, 0x6b8f69f65fd9e4b9u}, /* k = 276 */
    {0x71734c8ad9fffcfcu, 0x45b24323cc8fd45cu}, /* k = 277 */
    {0x5ac2a3a247fffd96u, 0x6af502830a0ca9e3u}, /* k = 278 */
    {0x489bb61b6ccccadfu, 0x08c402026e7087e9u}, /* k = 279 */
    {0x742c569247ae1164u, 0x746cd003e3e73fdbu}, /* k = 280 */
    {0x5cf04541d2f1a783u, 0x76bd73364fec3315u}, /* k = 281 */
    {0x4a59d101758e1f9cu, 0x5efdf5c50cbcf5abu}, /* k = 282 */
    {0x76f61b3588e365c7u, 0x4b2fefa1adfb22abu}, /* k = 283 */
    {0x5f2b48f7a0b5eb06u, 0x08f3261af195b555u}, /* k = 284 */
    {0x4c22a0c61a2b226bu, 0x20c284e25ade2aabu}, /* k = 285 */
    {0x79d1013cf6ab6a45u, 0x1ad0d49d5e304444u}, /* k = 286 */
    {0x617400fd9222bb6au, 0x48a7107de4f369d0u}, /* k = 287 */
    {0x4df6673141b562bbu, 0x53b8d9fe50c2bb0du}, /* k = 288 */
    {0x7cbd71e869223792u, 0x52c15cca1ad12b48u}, /* k = 289 */
    {0x63cac186ba81c60eu, 0x75677d6e7bda8906u}, /* k = 290 */
    {0x4fd5679efb9b04d8u, 0x5dec645863153a6cu}, /* k = 291 */
    {0x7fbbd8fe5f5e6e27u, 0x497a3a2704eec3dfu}, /* k = 292 */
};

#endif
